"""The one boundary between mcal and LightGBM: the parameters mcal sets itself (with LightGBM's aliases), the
checks of what mcal forwards, threads, LightGBM's errors re-worded as ``ValueError``, and the check of model text
read from a model file.

LightGBM judges the values of its own parameters: a value it refuses raises its ``LightGBMError`` (after it prints
``[LightGBM] [Fatal] ...`` to standard error), which :func:`lightgbm_errors_name_lightgbm_params` turns into a
``ValueError`` naming the parameter. mcal checks only what LightGBM would not refuse but silently change or crash
on: names it does not know (it ignores them), names MCGrad sets itself, two names of one parameter, values that
are not scalars or lists of them, strings that would end the value in LightGBM's ``key=value`` parameter string,
numbers that are not finite, and monotone constraints (LightGBM reads a fraction as 0, and aborts the process on
a constraint on a categorical column).

Model text read from a model file reaches LightGBM through :func:`booster_from_text` only, after the checks of
:func:`mcal._persistence.model_text.check_model_text` (a model file is untrusted input).
"""

from __future__ import annotations

import difflib
import functools
import math
import numbers
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import joblib
import numpy as np

from mcal._constraints import Interval
from mcal._optional import import_optional
from mcal._persistence.model_text import check_model_text
from mcal._validation import check_int

_Method = TypeVar("_Method", bound=Callable[..., Any])

#: LightGBM reads its integer parameters as int32 (larger values wrap around) and caps num_leaves at 131072.
INT32_MAX = 2**31 - 1
MAX_LEAVES = 131072


# -- MCGrad's and DFMC's own tree settings, and threads --------------------------------------------------------------
def tree_constraints(*, min_child_samples: int, limited_depth: bool) -> dict[str, Any]:
    """The parameter constraints of the LightGBM settings that MCGrad and DFMC expose: integers within LightGBM's
    int32 (larger values wrapped around), ``max_leaves`` within its cap of 131072 leaves, ``min_child_samples`` at
    least ``min_child_samples``, ``max_depth`` at least 1 when ``limited_depth`` (else any, <= 0 for no limit),
    a positive ``learning_rate``, non-negative penalties, and ``n_jobs`` (:func:`check_n_jobs`)."""

    def integer(low: int, high: int = INT32_MAX, note: str = " (LightGBM's int32)") -> Interval:
        return Interval(numbers.Integral, low, high, rule=f"an integer >= {low} and <= {high}{note}")

    depth = integer(1) if limited_depth else integer(-INT32_MAX, note=" (LightGBM's int32; <= 0 for no limit)")
    non_negative = Interval(numbers.Real, 0, None)
    return {
        "n_estimators": integer(1),
        "max_leaves": integer(2, MAX_LEAVES, ""),
        "min_child_samples": integer(min_child_samples),
        "max_depth": depth,
        "learning_rate": Interval(numbers.Real, 0, None, closed="neither"),
        "l2_regularization": non_negative,
        "min_gain_to_split": non_negative,
        "min_sum_hessian_in_leaf": non_negative,
        "n_jobs": [None, check_n_jobs],
    }


def check_n_jobs(name: str, n_jobs: Any) -> None:
    """The rule of ``n_jobs`` (scikit-learn's convention): a non-zero integer (None is the caller's to allow)."""
    rule = "None, an integer >= 1, or a negative integer counting back from the cores (-1: all)"
    check_int(name, n_jobs, rule, lambda v: v != 0)


#: Rows per LightGBM thread when ``n_jobs`` is None, to fit and to predict (``benchmarks/results/mcgrad_threads.md``).
ROWS_PER_THREAD = 10_000


def lightgbm_threads(n_jobs: Any, n_rows: int | None = None) -> int:
    """LightGBM's ``num_threads`` for an ``n_jobs`` in scikit-learn's convention, at most the cores.

    The cores are those this process may use, as joblib counts them (CPU affinity and container limits
    included). A positive integer gives itself, capped at the cores: more threads only wait at LightGBM's
    barriers, and LightGBM crashed or hung on tens of thousands. A negative one gives ``cores + 1 + n_jobs``
    as joblib counts (-1: every core, -2: all but one), and at least one. None, for ``n_rows`` rows, gives one
    thread per :data:`ROWS_PER_THREAD` rows, at most the free cores (:func:`free_cores`), at least one: each
    LightGBM tree (and each predict call) waits at OpenMP barriers, which on a few thousand rows cost more than
    the threads save, and 10 to 25 times the single-thread time when other processes hold the cores
    (``benchmarks/results/mcgrad_threads.md``). None without ``n_rows`` gives 0, LightGBM's default (all cores).

    Raises
    ------
    TypeError
        If ``n_jobs`` is not None or an integer (bools and floats included).
    ValueError
        If ``n_jobs`` is 0.
    """
    if n_jobs is None:
        if n_rows is None:
            return 0
        by_rows = min(_cores(), n_rows // ROWS_PER_THREAD)
        return 1 if by_rows <= 1 else max(1, min(by_rows, free_cores()))
    check_n_jobs("n_jobs", n_jobs)
    # at least one thread, as joblib's effective_n_jobs: a model saved with -16 on a server runs on a laptop
    return min(int(n_jobs), _cores()) if n_jobs > 0 else max(1, _cores() + 1 + int(n_jobs))


def free_cores() -> int:
    """The cores not taken by other processes, at least one: this process's cores less :func:`others_running`."""
    return max(1, _cores() - others_running())


def others_running(proc: Path = Path("/proc")) -> int:
    """Threads of other processes that are running or waiting for a core now; the rounded 1-minute load average
    where ``/proc`` cannot be read (macOS, Windows: 0 without a load average).

    Linux counts the runnable threads of the machine at this instant (the fourth field of ``/proc/loadavg``),
    from which this process's own runnable threads (state R in ``/proc/self/task/*/stat``) are taken: a thread
    that is running now, not the past minute's average, which counts this process's own last fit (a second fit
    right after a first saw its own load and took one thread on a quiet machine; ``mcgrad_threads_quiet.md``).
    """
    try:
        runnable = int((proc / "loadavg").read_text().split()[3].split("/")[0])
        tasks = list((proc / "self" / "task").iterdir())
    except (OSError, IndexError, ValueError):
        try:
            return round(os.getloadavg()[0])
        except (AttributeError, OSError):  # Windows has none; a platform may fail to read it
            return 0
    own = 0
    for task in tasks:
        try:  # the state follows the command name in parentheses, which may itself hold ")"
            own += (task / "stat").read_text().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):  # the thread ended since the listing
            continue
    return max(0, runnable - max(own, 1))


@functools.cache
def _cores() -> int:
    """Cores this process may use (joblib's count: affinity and cgroup limits included), read once: it costs 0.1 ms."""
    return max(1, int(joblib.cpu_count()))


def check_float32_weights(sample_weight: np.ndarray) -> None:
    """Raise ValueError unless the positive weights fit float32, as LightGBM stores them (smaller ones became 0,
    and LightGBM raised "sum of weights is zero" if all did; larger ones became infinite)."""
    positive = sample_weight[sample_weight > 0]
    check_float32_weight_range(float(positive.min()), float(positive.max()))


def check_float32_weight_range(low: float, high: float) -> None:
    """Raise ValueError unless ``[low, high]``, the range of the positive weights, fits float32."""
    tiny, big = float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)
    if low < tiny or high > big:
        raise ValueError(
            f"sample_weight must have its positive weights in [{tiny:.4g}, {big:.4g}], LightGBM's float32 range; "
            f"got weights from {low:.4g} to {high:.4g} (rescale them)"
        )


# -- lightgbm_params: what mcal forwards ----------------------------------------------------------------------------
#: LightGBM parameters that MCGrad sets itself, mapped to the MCGrad argument to use instead (or the reason, in
#: parentheses); LightGBM's aliases of each name are refused too (:func:`with_aliases`).
MCGRAD_RESERVED = {
    "n_jobs": "num_threads",
    "random_state": "seed bagging_seed feature_fraction_seed data_random_seed extra_seed drop_seed objective_seed",
    "n_estimators": "num_iterations",
    "learning_rate": "learning_rate",
    "max_depth": "max_depth",
    "min_child_samples": "min_data_in_leaf",
    "max_leaves": "num_leaves",
    "l2_regularization": "lambda_l2",
    "min_gain_to_split": "min_gain_to_split",
    "min_sum_hessian_in_leaf": "min_sum_hessian_in_leaf",
    "categorical_features": "categorical_feature",
    "early_stopping": "early_stopping_round",
    "(fixed)": "objective boosting num_class deterministic force_col_wise force_row_wise verbosity init_score",
    # one value per column of a single binned Dataset; the score column is binned apart from the features
    "(unsupported)": "max_bin_by_feature",
    # parameters of LightGBM's binary objective, which the cross-entropy objective silently ignores
    "(ignored)": "is_unbalance scale_pos_weight sigmoid boost_from_average pos_bagging_fraction neg_bagging_fraction",
}
_RESERVED_WHY = {
    "(fixed)": "which {owner} controls; it cannot be changed",
    "(ignored)": "which LightGBM ignores under {owner}'s objective (the initial score is the input's logit; "
    "weigh classes with sample_weight)",
    "(unsupported)": "which {owner} cannot pass on: it bins the score column apart from the features (use max_bin)",
}
#: LightGBM parameters that are not about training (files, tasks, prediction, evaluation, the network), whose
#: values a training call ignores or reads from disk; MCGrad reads no files for LightGBM.
_NOT_TRAINING = [
    "task",
    "config",
    "data",
    "valid",
    "input_model",
    "output_model",
    "convert_model",
    "convert_model_language",
    "saved_feature_importance_type",
    "snapshot_freq",
    "output_result",
    "initscore_filename",
    "valid_data_initscores",
    "forcedsplits_filename",
    "forcedbins_filename",
    "header",
    "label_column",
    "weight_column",
    "group_column",
    "ignore_column",
    "save_binary",
    "parser_config_file",
    "precise_float_parser",
    "two_round",
    "start_iteration_predict",
    "num_iteration_predict",
    "predict_raw_score",
    "predict_leaf_index",
    "predict_contrib",
    "predict_disable_shape_check",
    "pred_early_stop",
    "pred_early_stop_freq",
    "pred_early_stop_margin",
    "metric",
    "metric_freq",
    "is_provide_training_metric",
    "eval_at",
    "multi_error_top_k",
    "auc_mu_weights",
    "num_machines",
    "local_listen_port",
    "time_out",
    "machine_list_filename",
    "machines",
]
_MONOTONE = "monotone_constraints"
#: Characters that would end a value in LightGBM's "key=value key=value" parameter string.
_PARAM_STRING_BREAKS = re.compile(r"[\s=]")


@functools.cache
def _alias_groups() -> dict[str, frozenset[str]]:
    """Every LightGBM parameter name and alias, mapped to its group (the name and all its aliases): LightGBM's own
    table (``LGBM_DumpParamAliases``, read through ``lightgbm.basic._ConfigAliases``); empty where a LightGBM
    release lacks it, and the names then pass unchecked."""
    lgb = import_optional("lightgbm")
    table = getattr(getattr(lgb.basic, "_ConfigAliases", None), "_get_all_param_aliases", None)
    if table is None:
        return {}
    groups = [frozenset((key, *aliases)) for key, aliases in table().items()]
    return {name: group for group in groups for name in group}


def with_aliases(names: Any) -> frozenset[str]:
    """``names`` with every alias LightGBM knows for each, and the names themselves."""
    groups = _alias_groups()
    return frozenset(alias for name in names for alias in groups.get(name, (name,)))


@functools.cache
def _reserved_names() -> dict[str, str]:
    """Every name of :data:`MCGRAD_RESERVED` with all its aliases, mapped to the argument (or reason)."""
    return {alias: arg for arg, names in MCGRAD_RESERVED.items() for alias in with_aliases([arg, *names.split()])}


class LightGBMParams:
    """The constraint of an estimator's ``lightgbm_params``: None or a dict that :func:`check_lightgbm_params`
    accepts for ``owner`` (the estimator named in its messages), with the names in ``reserved`` (name to the
    argument to use instead) refused too, as set by the subclass ``reserved_by``."""

    def __init__(
        self, owner: str = "MCGrad", reserved: dict[str, str] | None = None, reserved_by: str | None = None
    ) -> None:
        self.owner, self.reserved, self.reserved_by = owner, reserved or {}, reserved_by or owner

    def check(self, name: str, params: Any) -> None:
        if params is None:
            return
        if not isinstance(params, dict):
            raise TypeError(f"{name} must be a dict or None; got {type(params).__name__}")
        for key, argument in self.reserved.items():
            if key in params:
                raise ValueError(
                    f"{name} must not set {key!r}, which {self.reserved_by} controls; use the argument {argument}="
                )
        check_lightgbm_params(params, self.owner)


def check_lightgbm_params(params: dict[str, Any], owner: str = "MCGrad") -> None:
    """Check a user's ``lightgbm_params`` for MCGrad before LightGBM sees them: names it knows, that MCGrad does
    not set, each parameter once, and values that LightGBM reads as given (:func:`check_lightgbm_value`).

    Raises
    ------
    TypeError
        If a key is not a string, or as :func:`check_lightgbm_value`.
    ValueError
        If LightGBM does not know a name (it would ignore it silently), MCGrad sets it (with any LightGBM
        alias), it is not a training parameter, two names of one parameter are given, or as
        :func:`check_lightgbm_value`.
    """
    groups, reserved = _alias_groups(), _reserved_names()
    seen: dict[frozenset[str], str] = {}
    not_training = with_aliases(_NOT_TRAINING)
    for key, value in params.items():
        if not isinstance(key, str):
            raise TypeError(f"lightgbm_params keys must be strings; got {key!r}")
        if groups and key not in groups:
            close = difflib.get_close_matches(key, groups, n=3)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise ValueError(
                f"lightgbm_params must hold LightGBM parameters; got {key!r}, which LightGBM does not "
                f"know and would ignore{hint}"
            )
        if key in reserved:
            why = _RESERVED_WHY.get(reserved[key], "which {owner} controls; use the argument {arg}=")
            raise ValueError(f"lightgbm_params must not set {key!r}, " + why.format(owner=owner, arg=reserved[key]))
        if key in not_training:
            raise ValueError(
                f"lightgbm_params must hold training parameters; got {key!r}, a LightGBM parameter of files, "
                f"tasks, prediction, evaluation or the network, which {owner} does not pass on (it reads no files "
                "for LightGBM)"
            )
        group = groups.get(key, frozenset((key,)))
        if group in seen:
            raise ValueError(
                f"lightgbm_params must set each LightGBM parameter once; got {seen[group]!r} and {key!r}, two "
                f"names of one parameter"
            )
        seen[group] = key
        check_lightgbm_value(key, value)


def check_lightgbm_value(key: str, value: Any) -> None:
    """Check the value of ``lightgbm_params[key]``: what LightGBM reads as given (whether it accepts the value is
    LightGBM's to judge).

    Raises
    ------
    TypeError
        If it is not a bool, number or string, a list (tuple or 1-D numpy array) of them, or a list of such
        lists (``interaction_constraints``).
    ValueError
        If a number is not finite (LightGBM took NaN, and a model fitted with infinity could not be saved), or a
        string holds whitespace or ``=`` (which would end the value in LightGBM's parameter string and start
        another).
    """
    items = _items(value)
    flat = [v for item in items for v in (item if isinstance(item, list) else [item])]
    if not all(isinstance(v, (bool, np.bool_, numbers.Real, str)) for v in flat):
        raise TypeError(
            f"lightgbm_params[{key!r}] must be a bool, number or string, a list (tuple or 1-D numpy "
            f"array) of them, or a list of such lists; got {value!r:.80}"
        )
    for v in flat:
        if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and not _finite(v):
            raise ValueError(f"lightgbm_params[{key!r}] must hold finite numbers; got {str(v)[:40]}")
        if isinstance(v, str) and _PARAM_STRING_BREAKS.search(v):
            raise ValueError(f"lightgbm_params[{key!r}] must be a string without whitespace or '='; got {v!r:.80}")


def _finite(v: numbers.Real) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an int past the largest double
        return False


def _is_list(value: Any) -> bool:
    """Whether LightGBM reads ``value`` as a list: a list, tuple or 1-D numpy array, joined with commas."""
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def _items(value: Any) -> list[Any]:
    """The items of a list (:func:`_is_list`), or ``[value]`` for a single value (a list inside a list stays one
    item, as ``interaction_constraints`` holds them)."""
    return list(value) if _is_list(value) else [value]


def round_params(estimator: Any, seed: int, num_threads: int, layout: str) -> dict[str, Any]:
    """The LightGBM parameters of one MCGrad round that come from the estimator's tree parameters (MCGrad and its
    multiclass form), the seed, threads and histogram ``layout`` (``"force_row_wise"`` or ``"force_col_wise"``),
    with ``lightgbm_params`` applied last; the caller adds the objective."""
    return {
        "learning_rate": float(estimator.learning_rate),
        "max_depth": int(estimator.max_depth),
        "min_data_in_leaf": int(estimator.min_child_samples),
        "num_leaves": int(estimator.max_leaves),
        "lambda_l2": float(estimator.l2_regularization),
        "min_gain_to_split": float(estimator.min_gain_to_split),
        "min_sum_hessian_in_leaf": float(estimator.min_sum_hessian_in_leaf),
        "num_threads": num_threads,
        "seed": seed,
        "deterministic": True,
        layout: True,
        "verbosity": -1,
        **forwarded(estimator.lightgbm_params),
    }


def forwarded(params: dict[str, Any] | None) -> dict[str, Any]:
    """``lightgbm_params`` as mcal hands them to LightGBM: an integer beyond int32 as a float, so that LightGBM
    reads it whole where the parameter is real-valued and refuses it, naming it, where it reads an int32 (it
    wrapped such integers around)."""

    def whole(v: Any) -> Any:
        big = isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) and abs(int(v)) > INT32_MAX
        return float(v) if big else v

    return {k: [whole(v) for v in value] if _is_list(value) else whole(value) for k, value in (params or {}).items()}


def check_monotone_constraints(lightgbm_params: dict[str, Any] | None, encoder: Any) -> None:
    """Raise ValueError unless the monotone constraints (under any LightGBM name) hold one sign in {-1, 0, 1} per
    LightGBM feature (the encoded columns of ``X``, then the score), 0 on categorical columns: LightGBM reads
    another value as 0 and aborts the process on a constraint on a categorical column."""
    d = encoder.n_features_in_
    params = lightgbm_params or {}
    for key in [k for k in params if k in with_aliases([_MONOTONE])]:
        value = params[key]
        signs = [_sign(v) for v in (value.split(",") if isinstance(value, str) else _items(value))]
        if (
            len(signs) != d + 1
            or any(v not in ("-1", "0", "1") for v in signs)
            or any(v != "0" for v, cat in zip(signs, encoder.categorical_, strict=False) if cat)
        ):
            columns = encoder.feature_names_in_ or list(range(d))
            cats = [columns[j] for j in np.flatnonzero(encoder.categorical_)]
            raise ValueError(
                f"lightgbm_params[{key!r}] must hold {d + 1} values in {{-1, 0, 1}}, one per column of X and "
                f"then one for the score, with 0 for the categorical columns {cats}; got {value!r}"
            )


def _sign(value: Any) -> str:
    """A monotone constraint as LightGBM reads it: ``"1"`` for 1 and 1.0 alike (its text ``"1.0"`` reads as 1), the
    text of anything else (``"True"``, which LightGBM would read as 0, and ``"0.9"`` are then refused)."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and value in (-1, 0, 1):
        return str(int(float(value)))
    return str(value).strip()


# -- model text -----------------------------------------------------------------------------------------------------
def booster_from_text(
    text: str, field: str, objective: str, categorical: list[bool] | None = None, *, n_classes: int = 1
) -> Any:
    """A ``lightgbm.Booster`` of one binary, regression or (``n_classes > 1``) multiclass model from the
    ``Booster.model_to_string`` text of a model file, parsed from what
    :func:`~mcal._persistence.model_text.check_model_text` lets through.

    Raises
    ------
    ValueError
        As :func:`~mcal._persistence.model_text.check_model_text`, and if LightGBM refuses the checked text.
    """
    checked = check_model_text(text, field, objective, categorical, n_classes=n_classes)
    lgb = import_optional("lightgbm")
    try:  # without tree_sizes LightGBM parses the (checked) trees one by one, raising LightGBMError on an error
        return lgb.Booster(model_str=checked)
    except lgb.basic.LightGBMError as exc:
        raise ValueError(f"model data field {field} is not a LightGBM model: {exc}") from exc


def has_linear_trees(text: str) -> bool:
    """Whether the model text (as ``Booster.model_to_string`` writes it) has a tree with linear leaves
    (LightGBM's ``linear_tree``)."""
    return "\nis_linear=1" in text


# -- LightGBM's errors ----------------------------------------------------------------------------------------------
#: Where LightGBM's message says in which source line a check failed, which tells the user nothing.
_SOURCE_LINE = re.compile(r"\s+at \S+\.(?:cpp|hpp|h), line \d+\s*\.?")


def lightgbm_error(params: dict[str, Any] | None, exc: Exception) -> ValueError:
    """A ``ValueError`` for LightGBM's error ``exc`` raised while ``params`` (``lightgbm_params``) are set, naming
    the parameter that the message names (by any of its LightGBM names, else by its text value), or all of
    them."""
    message = _SOURCE_LINE.sub("", str(exc)).strip()
    params = params or {}
    groups = _alias_groups()

    def named(key: str) -> bool:
        return any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", message) for n in groups.get(key, (key,)))

    def quoted(key: str) -> bool:
        v = params[key]
        return isinstance(v, str) and re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", message) is not None

    keys = [k for k in params if named(k)] or [k for k in params if quoted(k)]
    if len(keys) == 1:
        key = keys[0]
        return ValueError(
            f"lightgbm_params[{key!r}] must be a value that LightGBM accepts; got {params[key]!r:.80}, which "
            f"LightGBM rejected: {message}"
        )
    return ValueError(
        f"lightgbm_params must be parameters that LightGBM accepts for these data; got {params!r}, which "
        f"LightGBM rejected: {message}"
    )


def lightgbm_errors_name_lightgbm_params(method: _Method) -> _Method:
    """Decorate an estimator's fitting method: a ``LightGBMError`` raised while its ``lightgbm_params`` are set
    becomes a ``ValueError`` that names them (:func:`lightgbm_error`); LightGBM checks parameters, and their fit
    to the data, only when it trains."""

    @functools.wraps(method)
    def fit_with(self: Any, *args: Any, **kwargs: Any) -> Any:
        lgb = import_optional("lightgbm")
        try:
            return method(self, *args, **kwargs)
        except lgb.basic.LightGBMError as exc:
            if not self.lightgbm_params:
                raise
            raise lightgbm_error(self.lightgbm_params, exc) from exc

    return cast("_Method", fit_with)  # the same signature, for mypy to check the calls


def sorted_subset(binned: Any, rows: np.ndarray) -> Any:
    """``binned.subset(rows).construct()`` for increasing ``rows``, which ``Dataset.subset`` takes as they are.

    ``subset`` sorts its rows with Python's ``sorted`` (a list of NumPy integers, about 1 s per million rows, each
    round); the rows here are sorted already, so they are given as the int32 array LightGBM reads.
    """
    data = binned.subset(rows[:1])
    if not isinstance(getattr(data, "used_indices", None), list):  # a LightGBM that keeps them otherwise
        return binned.subset(rows).construct()
    data.used_indices = rows.astype(np.int32, copy=False)
    return data.construct()
