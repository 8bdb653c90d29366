"""LightGBM model text read from a model file (untrusted input), checked before LightGBM parses it.

LightGBM (4) trusts the model text it is given. A tree whose text is longer or shorter than the header's
``tree_sizes`` says aborts the process (the trees are parsed in OpenMP threads, whose errors end in
``std::terminate``); a tree line without ``=`` makes its parser read past the end of the text; child
indices, split features or category boundaries out of range make ``predict`` read out of bounds or never
return; an empty ``objective=`` header line, and a ``parameters:`` line without ``[key: value]`` brackets
(or a text cut inside that section), crash the process. :func:`booster_from_text` checks every header line
and the structure of every tree first, and keeps for LightGBM (:func:`mcal._lightgbm.booster_from_text`, the one
place that hands it the text) the trees, to parse one after another (without ``tree_sizes``), and nothing after
``end of trees``: the feature importances, ``parameters:`` and
``pandas_categorical:`` sections that follow are not needed to predict (a loaded booster has no
``params``, and writes no ``parameters:`` section). A malformed or hand-edited file thus raises a
``ValueError`` instead of crashing the process.

Loading is bounded by the text's length: a text with more trees or leaves per byte than LightGBM writes is refused
before anything is parsed, and the trees are read and checked one at a time (``benchmarks/results/input_safety.md``).
"""

from __future__ import annotations

import re

import numpy as np

# The lines of a tree section as LightGBM 4 writes them (its parser reads at most 22 lines per tree).
_TREE_KEYS = {
    "num_leaves",
    "num_cat",
    "split_feature",
    "split_gain",
    "threshold",
    "decision_type",
    "left_child",
    "right_child",
    "leaf_value",
    "leaf_weight",
    "leaf_count",
    "internal_value",
    "internal_weight",
    "internal_count",
    "cat_boundaries",
    "cat_threshold",
    "is_linear",
    "leaf_const",
    "num_features",
    "leaf_features",
    "leaf_coeff",
    "shrinkage",
}
#: The fewest bytes LightGBM 4 writes for a tree: its section has 16 KEY=VALUE lines and two empty ones (a one-leaf
#: tree takes 222 bytes or more), and for each leaf beyond the first, 12 more values of at least 2 bytes each.
MIN_TREE_BYTES, MIN_LEAF_BYTES = 200, 20
_NUM_LEAVES = re.compile(r"^num_leaves=(\d{1,18})$", re.MULTILINE)
_INT = re.compile(r"-?\d{1,18}")  # within int64
_FINITE = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_ANY_FLOAT = re.compile(r"[-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|inf|nan)", re.IGNORECASE)


def _listed(item: str) -> re.Pattern[str]:
    """A pattern of one or more ``item`` separated by single spaces."""
    return re.compile(f"(?:{item})(?: (?:{item}))*")


# The header lines of LightGBM 4 model text: the pattern of each value and its rule in words ("objective" is
# given by the caller). A feature's info is "none" (never split on), [min:max] (numerical) or its categories.
_NAME = r'[^\s=",:\[\]{}]+'
_INFO = rf"none|\[{_ANY_FLOAT.pattern}:{_ANY_FLOAT.pattern}\]|-?\d{{1,10}}(?::-?\d{{1,10}})*"
_HEADER = {
    "version": (re.compile("v4"), "v4 (the LightGBM 4 model format)"),
    "num_class": (re.compile("1"), "1 (a single-output model)"),
    "num_tree_per_iteration": (re.compile("1"), "1 (a single-output model)"),
    "label_index": (re.compile(r"\d{1,9}"), "a non-negative integer"),
    "max_feature_idx": (re.compile(r"\d{1,9}"), "a non-negative integer"),
    "feature_names": (
        _listed(_NAME),
        "max_feature_idx + 1 names (no spaces, '=' or JSON punctuation), separated by single spaces",
    ),
    "monotone_constraints": (_listed("-1|0|1"), "max_feature_idx + 1 values in {-1, 0, 1}, separated by single spaces"),
    "feature_infos": (
        _listed(_INFO),
        "max_feature_idx + 1 entries separated by single spaces, each 'none', "
        "[min:max] or colon-separated category integers",
    ),
    "tree_sizes": (re.compile(r"(?:\d{1,18}(?: \d{1,18})*)?"), "one size per tree, separated by single spaces"),
}
_OPTIONAL_HEADER = {"monotone_constraints"}
_PER_FEATURE = ("feature_names", "monotone_constraints", "feature_infos")
_UNUSED, _NUMERICAL, _CATEGORICAL = 0, 1, 2  # what a feature_infos entry says of its feature


def check_model_text(
    text: str, field: str, objective: str, categorical: list[bool] | None = None, *, n_classes: int = 1
) -> str:
    """The part of ``Booster.model_to_string`` text that LightGBM may parse into one binary, regression or
    (``n_classes > 1``) multiclass model, after checking all of it.

    Parameters
    ----------
    text : str
        LightGBM model text.
    field : str
        Where the text comes from, for error messages (e.g. ``"state.boosters[0]"``).
    objective : str
        The ``objective=`` header line the model must have, as LightGBM writes it (e.g. ``"cross_entropy"``).
    categorical : list of bool or None, default=None
        Which features the model must treat as categorical (the others as numerical), as the encoder that
        feeds it does; features that the model never uses may be either. None checks nothing of the kind.
    n_classes : int, default=1
        Outputs of the model: 1, or the classes of a multiclass model (``num_class`` and trees per iteration).

    Returns
    -------
    checked : str
        The header without ``tree_sizes`` and the trees; what follows ``end of trees`` is left out.

    Raises
    ------
    ValueError
        If the text is not the ASCII model text of a single-output LightGBM 4 model with that objective: a
        header line missing, unknown, repeated or out of its pattern (or with a count other than
        ``max_feature_idx + 1`` features, or one size per tree); a tree with a missing or unknown line, an
        array of the wrong length, a non-finite leaf value, a split feature, child index, decision type or
        category boundary out of range, a split that does not match its feature's ``feature_infos`` entry,
        or children that do not form a tree; no ``end of trees`` line after the trees; or, with ``categorical``
        of the model's length, a feature that ``feature_infos`` gives as the other kind.
    """
    if not text.startswith("tree\n") or "\r" in text or "\0" in text:
        raise ValueError(
            f"model data field {field} must be LightGBM model text (from 'tree', with \\n line ends and no NUL); "
            f"got {text[:20]!r}..."
        )
    check_text_density(text, field)
    lines = _Lines(text)
    header, (drop_start, drop_end) = _read_header(lines, field)
    kinds = _check_header(header, field, objective, n_classes)
    n_trees = _read_trees(lines, field, kinds)
    if len(header["tree_sizes"].split()) != n_trees:
        raise _header_error(field, header, "tree_sizes", f"{n_trees} sizes, one per tree")
    if lines.done or lines.line != "end of trees":
        got = repr(lines.line[:40]) if not lines.done else "the end of the text"
        raise ValueError(f"model data field {field} must follow its trees with the line 'end of trees'; got {got}")
    if not text[: lines.end].isascii():
        raise ValueError(
            f"model data field {field} must be ASCII text up to 'end of trees', as LightGBM writes it; "
            "got other characters"
        )
    if categorical is not None and len(categorical) == kinds.size:  # another count is the caller's error to name
        wrong = np.flatnonzero((kinds != _UNUSED) & (kinds != np.where(categorical, _CATEGORICAL, _NUMERICAL)))
        if wrong.size:
            j = int(wrong[0])
            raise ValueError(
                f"model data field {field} must treat feature {j} as {'categorical' if categorical[j] else 'numerical'}"
                f", as the encoder does; its header line feature_infos= gives it as "
                f"{'categorical' if kinds[j] == _CATEGORICAL else 'numerical'}"
            )
    return text[:drop_start] + text[drop_end : lines.end] + "\n"


def check_text_density(text: str, field: str) -> None:
    """Raise ValueError if ``text`` holds more trees or leaves for its length than LightGBM writes.

    Loading costs memory and time per tree and per leaf (the checks below, then LightGBM's parser), far more than
    the text of a tree: this bounds them by the file's size. Counted with ``str.count`` and one regular expression,
    before anything is parsed.
    """
    n_bytes = max(len(text), 1)
    n_trees = text.count("\nTree=")
    if n_trees * MIN_TREE_BYTES > n_bytes:
        raise ValueError(
            f"model data field {field} must be LightGBM model text, which writes at least {MIN_TREE_BYTES} bytes "
            f"per tree; got {n_trees} trees in {n_bytes} bytes"
        )
    n_leaves = sum(int(n) for n in _NUM_LEAVES.findall(text))
    if n_leaves * MIN_LEAF_BYTES > n_bytes:
        raise ValueError(
            f"model data field {field} must be LightGBM model text, which writes at least {MIN_LEAF_BYTES} bytes "
            f"per leaf; got {n_leaves} leaves in {n_bytes} bytes"
        )


class _Lines:
    """The lines of a text, as ``text.split("\\n")`` gives them, read one at a time (no list of them all): ``line``,
    where it starts and ends in the text, whether it is the ``last``, and ``done`` once past the last."""

    def __init__(self, text: str) -> None:
        self.text, self.start, self.done = text, 0, False
        self._read()

    def _read(self) -> None:
        end = self.text.find("\n", self.start)
        self.last = end < 0
        self.end = len(self.text) if self.last else end
        self.line = self.text[self.start : self.end]

    def next(self) -> None:
        if self.last:
            self.done, self.line = True, ""
        else:
            self.start = self.end + 1
            self._read()

    def block(self) -> list[str]:
        """The lines from this one up to the next empty line, which becomes the current line (or up to the end of
        the text, a final empty line left out: then ``done``). One ``split`` per block, not one step per line."""
        if self.done or not self.line:
            return []
        stop = self.text.find("\n\n", self.start)
        if stop >= 0:
            lines = self.text[self.start : stop].split("\n")
            self.start = stop + 1
            self._read()
            return lines
        lines = self.text[self.start :].split("\n")
        self.done, self.line, self.last = True, "", True
        return lines[:-1] if lines[-1] == "" else lines


def _read_header(lines: _Lines, field: str) -> tuple[dict[str, str], tuple[int, int]]:
    """Read the header lines after the first (``tree``); return them and where the ``tree_sizes`` line lies."""
    header, drop = {}, (0, 0)
    lines.next()
    while not lines.done and not lines.line.startswith("Tree=") and lines.line != "end of trees":
        key, eq, value = lines.line.partition("=")
        if lines.line and (not eq or (key not in _HEADER and key != "objective") or key in header):
            raise ValueError(
                f"model data field {field} has an unknown or repeated header line {lines.line[:40]!r}; each header "
                f"line must be one of LightGBM's KEY=VALUE lines {sorted([*_HEADER, 'objective'])}"
            )
        if lines.line:
            header[key] = value
            if key == "tree_sizes":
                drop = (lines.start, lines.end + 1)
        lines.next()
    return header, drop


def _read_trees(lines: _Lines, field: str, kinds: np.ndarray) -> int:
    """Read and check the tree sections one by one, split the way LightGBM's parser splits them; return how many."""
    n = 0
    while not lines.done and lines.line.startswith("Tree="):
        if lines.line != f"Tree={n}":
            raise ValueError(
                f"model data field {field} must number its trees from 0 in order; got {lines.line[:40]!r} for tree {n}"
            )
        lines.next()
        tree: dict[str, str] = {}
        for line in lines.block():
            key, eq, value = line.partition("=")
            if not eq or key not in _TREE_KEYS or key in tree:
                problem = "an unknown or repeated" if eq else "a"
                raise ValueError(
                    f"model data field {field} has {problem} line {line[:40]!r} in tree {n}; "
                    "each line of a tree must be one of LightGBM's KEY=VALUE lines"
                )
            tree[key] = value
        if lines.done or lines.last:
            raise ValueError(f"model data field {field} must end each tree with an empty line; tree {n} does not")
        try:
            _check_tree(tree, kinds)
        except ValueError as exc:
            raise ValueError(f"model data field {field} has a malformed tree {n}: {exc}") from None
        n += 1
        while not lines.done and not lines.line:
            lines.next()
    return n


def _header_error(field: str, header: dict[str, str], key: str, rule: str) -> ValueError:
    value = header.get(key)
    got = "no such line" if value is None else repr(value[:60]) + ("..." if len(value) > 60 else "")
    return ValueError(
        f"model data field {field} must be LightGBM model text whose header line {key}= holds {rule}; got {got}"
    )


def _check_header(header: dict[str, str], field: str, objective: str, n_classes: int = 1) -> np.ndarray:
    """Raise ValueError unless every header line holds what LightGBM 4 writes (the count of ``tree_sizes`` is
    checked once the trees are read); return what each feature is (``_UNUSED``, ``_NUMERICAL`` or
    ``_CATEGORICAL``)."""
    rules = {**_HEADER, "objective": (re.compile(re.escape(objective)), repr(objective))}
    if n_classes > 1:
        outputs = (re.compile(str(n_classes)), f"{n_classes} (one output per class)")
        rules.update(num_class=outputs, num_tree_per_iteration=outputs)
    for key, (pattern, rule) in rules.items():
        value = header.get(key)
        if (value is None and key not in _OPTIONAL_HEADER) or (value is not None and not pattern.fullmatch(value)):
            raise _header_error(field, header, key, rule)
    n_features = int(header["max_feature_idx"]) + 1
    for key in _PER_FEATURE:
        if key in header and len(header[key].split(" ")) != n_features:
            raise _header_error(field, header, key, f"{n_features} entries (max_feature_idx + 1)")
    infos = header["feature_infos"].split(" ")
    return np.array([_UNUSED if v == "none" else _NUMERICAL if v.startswith("[") else _CATEGORICAL for v in infos])


def _check_tree(tree: dict[str, str], kinds: np.ndarray) -> None:
    """Raise ValueError if a parsed tree section could make LightGBM read out of bounds or loop, or lleaves
    compile a split that does not match its feature's kind (``kinds``, from ``feature_infos``)."""
    n_features = kinds.size
    n_leaves = _ints(tree, "num_leaves", 1, low=1)[0]
    n_cat = _ints(tree, "num_cat", 1, low=0)[0]
    _floats(tree, "leaf_value", n_leaves, finite=True)
    if "shrinkage" in tree:
        _floats(tree, "shrinkage", 1, finite=True)
    linear = _ints(tree, "is_linear", 1, low=0, high=1, default="0")[0] == 1
    if n_leaves == 1 and not linear:
        return  # LightGBM reads nothing else of a one-leaf tree
    for key, size in (
        ("split_gain", n_leaves - 1),
        ("internal_value", n_leaves - 1),
        ("internal_weight", n_leaves - 1),
        ("leaf_weight", n_leaves),
    ):
        if key in tree:
            _floats(tree, key, size)
    for key, size in (("internal_count", n_leaves - 1), ("leaf_count", n_leaves)):
        if key in tree:
            _ints(tree, key, size)
    nodes = np.arange(n_leaves - 1)
    left, right = _ints(tree, "left_child", n_leaves - 1), _ints(tree, "right_child", n_leaves - 1)
    children, parents = np.concatenate([left, right]), np.concatenate([nodes, nodes])
    inner = children >= 0
    # every node but the root, and every leaf, has one parent; an inner node comes after its parent (no loops)
    if n_leaves > 1 and not (
        np.array_equal(np.sort(children[inner]), np.arange(1, n_leaves - 1))
        and np.array_equal(np.sort(~children[~inner]), np.arange(n_leaves))
        and np.all(children[inner] > parents[inner])
    ):
        raise ValueError("left_child and right_child must form a binary tree over the nodes and leaves")
    split = _ints(tree, "split_feature", n_leaves - 1, low=0, high=n_features - 1)
    # bit 0: categorical, bit 1: missing values go left, bits 2-3: missing type 0 (none), 1 (zero) or 2 (NaN)
    decision = _ints(tree, "decision_type", n_leaves - 1, low=0, high=11, default="0 " * (n_leaves - 1))
    categorical = (decision & 1) == 1
    wrong = np.flatnonzero(kinds[split] != np.where(categorical, _CATEGORICAL, _NUMERICAL))
    if wrong.size:
        j = wrong[0]
        kind = "a categorical" if categorical[j] else "a numerical"
        raise ValueError(
            f"split {j} must be on a feature whose feature_infos entry fits its decision_type; got "
            f"{kind} decision_type {decision[j]} on feature {split[j]}, which feature_infos gives as "
            f"{('unused', 'numerical', 'categorical')[kinds[split[j]]]}"
        )
    threshold = _floats(tree, "threshold", n_leaves - 1)
    if categorical.any() or n_cat > 0:
        bounds = _ints(tree, "cat_boundaries", n_cat + 1, low=0)
        if bounds[0] != 0 or np.any(np.diff(bounds) < 0):
            raise ValueError("cat_boundaries must start at 0 and never decrease")
        _ints(tree, "cat_threshold", int(bounds[-1]), low=0, high=2**32 - 1)
        index = threshold[categorical]
        if not np.all((index == np.round(index)) & (index >= 0) & (index < n_cat)):
            raise ValueError(f"the threshold of a categorical split must index one of num_cat={n_cat} category sets")
    if linear:
        _floats(tree, "leaf_const", n_leaves, finite=True)
        total = int(_ints(tree, "num_features", n_leaves, low=0).sum())
        _ints(tree, "leaf_features", total, low=0, high=n_features - 1)
        _floats(tree, "leaf_coeff", total, finite=True)


def _tokens(tree: dict[str, str], key: str, size: int, default: str | None) -> list[str]:
    value = tree.get(key, default)
    if value is None:
        raise ValueError(f"the line {key}= is missing")
    tokens = value.split()
    if len(tokens) != size:
        raise ValueError(f"{key} must hold {size} value(s); got {len(tokens)}")
    return tokens


def _ints(
    tree: dict[str, str],
    key: str,
    size: int,
    *,
    low: int | None = None,
    high: int | None = None,
    default: str | None = None,
) -> np.ndarray:
    tokens = _tokens(tree, key, size, default)
    if not all(_INT.fullmatch(t) for t in tokens):
        raise ValueError(f"{key} must hold integers; got {' '.join(tokens)[:60]!r}")
    values = [int(t) for t in tokens]  # checked with min and max of the list: faster than numpy's on a tree's few
    if values and ((low is not None and min(values) < low) or (high is not None and max(values) > high)):
        raise ValueError(f"{key} must hold integers in [{low}, {high}]; got {' '.join(tokens)[:60]!r}")
    return np.array(values, dtype=np.int64)


def _floats(tree: dict[str, str], key: str, size: int, *, finite: bool = False) -> np.ndarray:
    tokens = _tokens(tree, key, size, None)
    pattern = _FINITE if finite else _ANY_FLOAT
    if not all(pattern.fullmatch(t) for t in tokens):
        raise ValueError(f"{key} must hold {'finite ' if finite else ''}numbers; got {' '.join(tokens)[:60]!r}")
    return np.array([float(t) for t in tokens], dtype=np.float64)
