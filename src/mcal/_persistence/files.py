"""Model files: versioned JSON with a SHA-256 digest of its content, plus a safetensors file for network weights.
Never pickle."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from mcal._optional import import_optional
from mcal._persistence.atomic import as_path, atomic_write_bytes, check_output_path
from mcal._persistence.codec import Storable, calibrator_from_dict
from mcal._registry import wrapper_by_name
from mcal._validation import warn

FORMAT = "mcal-model"
#: 2 adds ``content_sha256``; version-1 files (without it) still load, with a warning.
SCHEMA_VERSION = 2
#: The header entry holding the digest of everything else in the file (see :func:`content_digest`).
DIGEST_KEY = "content_sha256"
#: Model files larger than this are refused before parsing (a guard against feeding arbitrary files).
MAX_MODEL_BYTES = 2**30


def weights_files(path: Path) -> list[Path]:
    """The weights files that saves to the model file ``path`` may have written beside it: ``STEM.safetensors``
    (mcal before content-addressed names) and ``STEM.DIGEST.safetensors`` (``DIGEST``: 16 hex digits)."""
    pattern = re.compile(re.escape(path.stem) + r"\.(?:[0-9a-f]{16}\.)?safetensors")
    return sorted(p for p in path.parent.iterdir() if pattern.fullmatch(p.name) and p.is_file())


def content_digest(content: dict[str, Any]) -> str:
    """Return the hex SHA-256 of the canonical serialization of a parsed model file's ``content``.

    ``content`` is the file's top-level object without :data:`DIGEST_KEY`, as ``json.loads`` returns it. The canonical
    form is ``json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)``
    encoded as UTF-8 (all ASCII). It is a fixed point of parsing: every float is written as its shortest
    round-trip ``repr`` and read back as the same float (``-0.0``, subnormals and ``1e-300`` included), strings
    are escaped one way, and keys are sorted, so a file's layout (spacing, key order, number spelling) does not
    change its digest, while any change to a value does. The weights file enters through its SHA-256, which
    ``content["weights"]`` records.

    Raises
    ------
    ValueError
        If ``content`` holds a non-finite number (``NaN``, ``Infinity`` or an overflowing literal such as
        ``1e400``), which :func:`save` never writes.
    """
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def save(model: Any, path: str | os.PathLike, *, metadata: dict[str, Any] | None = None) -> Path:
    """Save a calibrator, or a fitted :class:`~mcal.CalibratedClassifier`'s calibrators, to a versioned JSON model file.

    Parameters
    ----------
    model : mcal.BaseCalibrator or mcal.CalibratedClassifier
        A fitted (or unfitted) mcal calibrator, or a fitted CalibratedClassifier: its file holds its calibrators,
        classes and parameters but not its base estimators (scikit-learn models, which JSON cannot hold), which
        :func:`load` takes back as ``estimators``.
    path : str or path-like
        Destination, conventionally ``*.json``. Network models also write ``STEM.DIGEST.safetensors`` beside
        it (``DIGEST``: the first 16 hex digits of its SHA-256); the JSON records its name and SHA-256.
    metadata : dict, default=None
        JSON-safe extra information (the command line stores its column names here).

    Returns
    -------
    path : Path
        The JSON file written.

    Raises
    ------
    TypeError
        If ``model`` is neither an mcal calibrator nor a CalibratedClassifier, or holds a value that cannot be stored
        (e.g. a ``random_state`` that is not an integer), or ``path`` is not a str or path-like object.
    FileNotFoundError, IsADirectoryError
        If the folder of ``path`` does not exist, or ``path`` is a folder (nothing is written).
    NotFittedError
        If ``model`` is a CalibratedClassifier that is not fitted (its file holds fitted calibrators only).

    Notes
    -----
    The file is schema version 2: its header entry ``content_sha256`` is the SHA-256 of the canonical
    serialization of everything else in the file, which includes
    the weights file's SHA-256, so :func:`load` detects a changed digit, reordered rounds or a weights file taken
    from another model. The digest detects corruption and edits, not forgery: anyone who edits a file can
    compute a new one. Both files are written atomically (a temporary file, then a rename); if the JSON file
    cannot be written the weights file is removed, so a failed save leaves neither behind.
    """
    _check_saveable(model)
    from mcal._version import __version__

    path = as_path(path, "path")
    content: dict[str, Any] = {"model": model.to_dict(), "metadata": metadata or {}}
    tensors = model._get_tensors() if model.__sklearn_is_fitted__() else {}
    weights = wpath = None
    if tensors:
        st = import_optional("safetensors.numpy")
        # safetensors writes an array's buffer in memory order: a transposed or sliced view would be scrambled
        weights = st.save({name: np.asarray(arr, order="C") for name, arr in tensors.items()})
        digest = hashlib.sha256(weights).hexdigest()
        wpath = path.with_name(f"{path.stem}.{digest[:16]}.safetensors")
        content["weights"] = {"file": wpath.name, "sha256": digest}
    header = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "mcal_version": __version__}
    # the digest of the content as load will parse it (integer keys become strings, tuples lists)
    parsed = json.loads(json.dumps({**header, **content}, allow_nan=False))
    text = json.dumps({**header, DIGEST_KEY: content_digest(parsed), **content}, allow_nan=False, separators=(",", ":"))
    check_output_path(path)
    _write_pair(path, text.encode("utf-8"), wpath, weights)
    return path


def _check_saveable(model: Any) -> None:
    """Raise ``TypeError`` unless ``model`` is an mcal calibrator or a model around estimators (the classifier)."""
    if not isinstance(model, Storable) and wrapper_by_name(type(model).__name__) is not type(model):
        raise TypeError(
            "model must be an mcal calibrator or a CalibratedClassifier (model files hold them as JSON, never "
            f"pickle); got {type(model).__name__}"
        )


def _write_pair(path: Path, text: bytes, wpath: Path | None, weights: bytes | None) -> None:
    """Write the weights (under their content-addressed name) first, the model file second, and remove the weights
    of the model file it replaced last: whatever fails, ``path`` and the weights it names belong together."""
    previous = weights_files(path)
    if wpath is not None and weights is not None:
        atomic_write_bytes(wpath, weights)
    try:
        atomic_write_bytes(path, text)
    except BaseException:
        if wpath is not None and wpath not in previous:  # weights without their model file would be left behind
            wpath.unlink(missing_ok=True)
        raise
    for old in previous:  # the replaced model's weights, and those of saves killed before their rename
        if old != wpath:
            with contextlib.suppress(OSError):  # the model is saved; the next save tries again
                old.unlink(missing_ok=True)


def load(path: str | os.PathLike, *, estimators: Any = None, return_metadata: bool = False) -> Any:
    """Load a model file written by :func:`save`.

    Only JSON is parsed and only registered mcal classes are built; weights are read with safetensors,
    never with pickle or ``torch.load``.

    Parameters
    ----------
    path : str or path-like
        The JSON model file.
    estimators : classifier or list of classifiers, default=None
        For the file of a :class:`~mcal.CalibratedClassifier` (required there, refused for a calibrator's): its
        fitted base estimators, ``estimators_`` at save, in that order: one per calibrator of the file (``cv`` of
        them for a cross-fitted ensemble, else one, which may be passed alone). See
        :meth:`CalibratedClassifier.from_dict <mcal.CalibratedClassifier.from_dict>` for the checks.
    return_metadata : bool, default=False
        Also return the metadata dict stored with the model.

    Returns
    -------
    model : mcal.BaseCalibrator or mcal.CalibratedClassifier
        The calibrator, or the classifier around ``estimators`` (a tuple ``(model, metadata)`` when
        ``return_metadata``).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like object, or ``estimators`` is missing for a CalibratedClassifier's file
        or given for a calibrator's, or is not a fitted classifier with ``predict_proba``.
    FileNotFoundError
        If the file (or its weights file) does not exist.
    ValueError
        If the file is not JSON, not an mcal model, of an unsupported schema version, its content does not
        match its ``content_sha256`` digest (the file is corrupt or was edited), it names an unknown class,
        holds malformed state (LightGBM model text included: every line that LightGBM reads is checked before
        it parses the text), nests its JSON too deeply to be read, or its weights file does not match the
        recorded checksum (it belongs to another model); or ``estimators`` do not match the classifier saved
        (their number, class, classes or features).

    Warns
    -----
    CalibrationWarning
        For a schema-version-1 file (written by mcal before the digest existed): it loads, with all the
        structural checks, but nothing can tell whether its values were corrupted or edited. The warning names
        the file (Python shows it once per file and call site); ``mcal.save(mcal.load(path), path)`` rewrites
        it as version 2.

    Notes
    -----
    The digest is checked first, after only the checks that identify an mcal model file (``format`` and
    ``schema_version``): nothing else in the file is used before it matches. See :func:`save`.
    """
    path = as_path(path, "path")
    if not path.is_file():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist (or is not a file)")
    if path.stat().st_size > MAX_MODEL_BYTES:
        raise ValueError(f"model file {path} is larger than {MAX_MODEL_BYTES} bytes; refusing to parse it")
    raw = path.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8-sig"))  # a byte-order mark (which some editors add) is not content
    except ValueError as exc:  # also UnicodeDecodeError, and an integer past Python's digit limit
        raise ValueError(f"{path} is not an mcal model file: it is not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise _nested_too_deeply(path) from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path} is not an mcal model file: 'format' must be {FORMAT!r}")
    version = doc.get("schema_version")
    version = version if type(version) is int else repr(version)  # true and 2.0 equal 1 and 2 but are not versions
    if version == SCHEMA_VERSION:
        _check_digest(path, doc)
    elif version == 1:
        warn(
            f"{path} is a schema-version-1 model file, which has no digest: mcal cannot check that its content "
            "is not corrupt or edited. Save the model again to add one"
        )
    else:
        raise ValueError(
            f"{path} has schema_version {version}; this mcal reads schema_version {SCHEMA_VERSION} "
            "(and 1, without an integrity check)"
        )
    tensors = None
    if "weights" in doc:
        tensors = _read_weights(path, doc["weights"])
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise ValueError(f"{path}: 'metadata' must be a dict")
    data = doc.get("model")
    wrapper = wrapper_by_name(data.get("class") if isinstance(data, dict) else None)
    estimators = _check_estimators_given(path, data, wrapper, estimators)  # before the file: errors of the caller
    try:
        if wrapper is None:
            model = calibrator_from_dict(data, tensors)
        else:
            model = wrapper.from_dict(data, tensors, estimators=estimators)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path} holds a malformed model: {exc}") from exc
    return (model, metadata) if return_metadata else model


def _check_estimators_given(path: Path, data: Any, wrapper: Any, estimators: Any) -> Any:
    """``estimators`` as the wrapper's ``_check_estimators`` returns them (a list), or None for a calibrator's file.

    Raises
    ------
    TypeError
        Unless ``estimators`` is given exactly for the file of a model around estimators, or as
        ``_check_estimators``.
    """
    if wrapper is None and estimators is not None:
        raise TypeError(
            f"estimators must be None for {path}, the file of a {data.get('class')!r} calibrator; got "
            f"{type(estimators).__name__} (only a CalibratedClassifier's file takes its estimators back)"
        )
    if wrapper is not None and estimators is None:
        state = data.get("state")
        held = state.get("calibrators") if isinstance(state, dict) else None
        count = f"{len(held)} " if isinstance(held, list) else ""
        raise TypeError(
            f"estimators must be given to load {path}: the file holds a {wrapper.__name__}'s {count}calibrator(s) "
            "but not the fitted estimator(s) they calibrate; pass them as they were in estimators_ at save, in "
            "that order: mcal.load(path, estimators=[...])"
        )
    return None if wrapper is None else wrapper._check_estimators(estimators)


def _nested_too_deeply(path: Path) -> ValueError:
    return ValueError(
        f"model file {path} must hold JSON nested no deeper than Python's recursion limit "
        f"({sys.getrecursionlimit()}) lets mcal read, as mcal.save writes it; got JSON nested too deeply"
    )


def _check_digest(path: Path, doc: dict) -> None:
    """Remove ``doc[DIGEST_KEY]`` and check it against the digest of the rest of ``doc``."""
    expected = doc.pop(DIGEST_KEY, None)
    if not isinstance(expected, str) or not re.fullmatch("[0-9a-f]{64}", expected):
        raise ValueError(
            f"{path}: {DIGEST_KEY!r} must be the 64 lowercase hex digits of the SHA-256 of the "
            f"file's content, as mcal.save writes it; got {expected!r:.80}"
        )
    try:
        got = content_digest(doc)
    except ValueError as exc:
        raise ValueError(
            f"{path} is corrupt or was edited: it holds a number that is not finite (NaN, Infinity "
            "or an overflowing literal), which mcal.save never writes"
        ) from exc
    except RecursionError as exc:
        raise _nested_too_deeply(path) from exc
    if got != expected:
        raise ValueError(
            f"{path}: the content does not match its SHA-256 digest (the file is corrupt or was "
            f"edited): expected {expected[:16]}..., got {got[:16]}..."
        )


def _read_weights(path: Path, info: Any) -> dict:
    if not isinstance(info, dict) or not isinstance(info.get("file"), str) or not isinstance(info.get("sha256"), str):
        raise ValueError(f"{path}: 'weights' must name a file and its sha256")
    name = info["file"]
    if Path(name).name != name:
        raise ValueError(f"{path}: the weights file must lie beside the model file; got {name!r}")
    wpath = path.with_name(name)
    if not wpath.is_file():
        raise FileNotFoundError(f"weights file {str(wpath)!r}, which model file {str(path)!r} names, does not exist")
    data = wpath.read_bytes()
    if hashlib.sha256(data).hexdigest() != info["sha256"]:
        raise ValueError(f"{wpath} does not match the checksum recorded in {path}; the files do not belong together")
    st = import_optional("safetensors.numpy")
    try:
        return st.load(data)
    except Exception as exc:  # safetensors raises its own SafetensorError
        raise ValueError(f"{wpath} is not a valid safetensors file: {exc}") from exc
