"""LightGBM model text in MCGrad and DFMC model files (``mcal._lightgbm.booster_from_text``, checked by
``mcal._persistence.model_text``).

Every header and tree line that LightGBM reads is checked before it parses the text, what follows
``end of trees`` is left out, and no edit of the text crashes the process: a seeded fuzz of single-line edits
and truncations runs in a subprocess, so that a segfault fails the test instead of ending pytest.
"""

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("lightgbm")

import mcal
from mcal import DFMC, MCGrad
from mcal._optional import is_available

FAST = dict(
    n_estimators=3, learning_rate=0.2, min_child_samples=20, max_rounds=2, early_stopping=None, n_jobs=1, random_state=0
)


def make_data(n=1500, seed=0):
    """A categorical and a numeric column (with NaN); the label depends on the category."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"cat": rng.choice(["a", "b", "c"], n), "num": rng.normal(size=n)})
    X.loc[::13, "num"] = np.nan
    p = np.clip(rng.random(n), 0.01, 0.99)
    y = (rng.random(n) < np.where(X["cat"] == "a", 0.1, 0.6)).astype(int)
    return X, p, y


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def fitted(data):
    X, p, y = data
    return MCGrad(**FAST).fit(p, y, X=X)


def load_edited(fitted, edit, index=0):
    """MCGrad.from_dict of ``fitted`` with ``edit`` applied to the text of booster ``index``."""
    state = fitted.to_dict()
    state["state"]["boosters"][index] = edit(state["state"]["boosters"][index])
    return MCGrad.from_dict(state)


def replace(old, new, count=1):
    def edit(text):
        assert old in text  # the edit must change something, or the test could not fail
        return text.replace(old, new, count)

    return edit


def sub(pattern, new):
    """Edit the first line matching ``pattern`` (re.MULTILINE)."""

    def edit(text):
        edited, n = re.subn(pattern, new, text, count=1, flags=re.MULTILINE)
        assert n == 1
        return edited

    return edit


def in_tree_0(pattern, new):
    """Edit the first line of tree 0 matching ``pattern``."""

    def edit(text):
        start, end = text.index("Tree=0\n"), text.index("Tree=1\n")
        return text[:start] + sub(pattern, new)(text[start:end]) + text[end:]

    return edit


def first_numerical_threshold_to_zero(text):
    tree = text[text.index("Tree=0\n") : text.index("Tree=1\n")]
    decision = [int(v) for v in re.search(r"^decision_type=(.*)$", tree, re.MULTILINE).group(1).split()]
    j = next(j for j, d in enumerate(decision) if d & 1 == 0)
    threshold = re.search(r"^threshold=(.*)$", tree, re.MULTILINE).group(1).split()
    threshold[j] = "0"
    return in_tree_0(r"^threshold=.*$", "threshold=" + " ".join(threshold))(text)


# -- the header ---------------------------------------------------------------------------------------------
HEADER_EDITS = {
    # an empty objective crashed the process (segfault); a missing one made lleaves raise RuntimeError
    "objective empty": (sub(r"^objective=.*$", "objective="), "objective= holds 'cross_entropy'; got ''"),
    "objective missing": (sub(r"^objective=.*\n", ""), "objective= holds 'cross_entropy'; got no such line"),
    "objective other": (
        sub(r"^objective=.*$", "objective=binary sigmoid:1"),
        "objective= holds 'cross_entropy'; got 'binary",
    ),
    "version": (sub(r"^version=.*$", "version=v3"), r"version= holds v4 \(the LightGBM 4 model format\); got 'v3'"),
    "trees per iteration": (
        sub(r"^num_tree_per_iteration=.*$", "num_tree_per_iteration=2"),
        "num_tree_per_iteration= holds 1",
    ),
    "label_index": (sub(r"^label_index=.*$", "label_index=-1"), "label_index= holds a non-negative integer; got '-1'"),
    "max_feature_idx": (sub(r"^max_feature_idx=.*$", "max_feature_idx=2x"), "max_feature_idx= holds a non-negative"),
    "feature count": (
        sub(r"^max_feature_idx=.*$", "max_feature_idx=3"),
        r"feature_names= holds 4 entries \(max_feature_idx \+ 1\)",
    ),
    "feature name with =": (sub(r"^feature_names=Column_0", "feature_names=Col=umn_0"), "feature_names= holds max"),
    "feature names spaced": (sub(r"^feature_names=", "feature_names= "), "feature_names= holds"),
    # an odd feature_infos entry made lleaves fail with "LLVM IR parsing error"
    "feature info": (sub(r"^(feature_infos=.*) \S+$", r"\1 1e308"), "feature_infos= holds .*'none', \\[min:max\\] or"),
    "feature infos count": (sub(r"^(feature_infos=.*) \S+$", r"\1"), "feature_infos= holds 3 entries"),
    "monotone value": (
        sub(r"^(feature_infos=.*)$", r"monotone_constraints=0 1 2\n\1"),
        r"monotone_constraints= holds .*\{-1, 0, 1\}",
    ),
    "monotone count": (
        sub(r"^(feature_infos=.*)$", r"monotone_constraints=0 1\n\1"),
        "monotone_constraints= holds 3 entries",
    ),
    "tree_sizes count": (sub(r"^tree_sizes=", "tree_sizes=1 "), "tree_sizes= holds 3 sizes, one per tree; got '1 "),
    "tree_sizes missing": (sub(r"^tree_sizes=.*\n", ""), "tree_sizes= holds .*; got no such line"),
    "unknown line": (sub(r"^(version=.*)$", r"\1\naverage_output"), "unknown or repeated header line 'average_output'"),
    "repeated line": (sub(r"^(num_class=.*)$", r"\1\n\1"), "unknown or repeated header line 'num_class=1'"),
    "not ASCII": (sub(r"^feature_names=Column_0", "feature_names=Colümn_0"), "must be ASCII text up to 'end of trees'"),
}


@pytest.mark.parametrize("edit, match", HEADER_EDITS.values(), ids=HEADER_EDITS)
def test_header_lines_are_checked_before_lightgbm_parses_them(fitted, edit, match):
    with pytest.raises(ValueError, match=r"model data field state.boosters\[0\] .*" + match):
        load_edited(fitted, edit)


# -- the trees ----------------------------------------------------------------------------------------------
TREE_EDITS = {
    "numbering": (
        replace("\nTree=1\n", "\nTree=7\n"),
        "must number its trees from 0 in order; got 'Tree=7' for tree 1",
    ),
    "end of trees": (
        replace("\nend of trees\n", "\nend of tree\n"),
        "must follow its trees with the line 'end of trees'; got 'end of tree'",
    ),
    "cut after the trees": (
        lambda t: t[: t.index("\nend of trees\n") + 1],
        "must follow its trees with the line 'end of trees'; got the end",
    ),
    # lleaves raised "Decision type 13 not yet tested for"; LightGBM writes 0 to 11
    "decision_type": (
        in_tree_0(r"^decision_type=(.*) \d+$", r"decision_type=\1 13"),
        r"decision_type must hold integers in \[0, 11\]",
    ),
    "shrinkage": (in_tree_0(r"^shrinkage=.*$", "shrinkage=x"), "shrinkage must hold finite numbers"),
    # without decision_type LightGBM reads numerical splits, also on the categorical column (lleaves then
    # failed an assert); and a categorical column given a numerical range
    "decision_type missing": (
        in_tree_0(r"^decision_type=.*\n", ""),
        "a numerical decision_type 0 on feature 0, which feature_infos gives as categorical",
    ),
    "feature info of another kind": (
        sub(r"^feature_infos=\S+", "feature_infos=[0:2]"),
        "a categorical decision_type 1 on feature 0, which feature_infos gives as numerical",
    ),
}


@pytest.mark.parametrize("edit, match", TREE_EDITS.values(), ids=TREE_EDITS)
def test_tree_lines_are_checked_against_each_other_and_the_header(fitted, edit, match):
    with pytest.raises(ValueError, match=r"model data field state.boosters\[0\] .*" + match):
        load_edited(fitted, edit)


# -- what follows the trees -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit",
    [
        replace("[verbosity: -1]", "[verbosity: -1]\nfoo"),  # a line without brackets: segfault
        lambda t: t[: t.index("[verbosity") + 4],  # cut inside the parameters section: segfault
        replace("end of parameters", ""),
        replace("pandas_categorical:null", "pandas_categorical:" + "[" * 100_000),  # RecursionError in LightGBM
        replace("pandas_categorical:null", 'pandas_categorical:[["x", "y"]]'),
        replace("\nfeature_importances:\n", "\nfeature_importances:\nColumn_0=x=y\n"),
        lambda t: t[: t.index("\nend of trees\n") + len("\nend of trees\n")],
    ],
)
def test_text_after_end_of_trees_is_left_out_and_predictions_stay_bit_identical(fitted, data, edit):
    X, p, _ = data
    loaded = load_edited(fitted, edit)
    np.testing.assert_array_equal(loaded.predict(p, X=X), fitted.predict(p, X=X))
    np.testing.assert_array_equal(loaded.predict(p[:1], X=X.iloc[:1]), fitted.predict(p[:1], X=X.iloc[:1]))


def test_a_loaded_model_saves_and_loads_again_with_bit_identical_predictions(fitted, data, tmp_path):
    X, p, _ = data
    first = mcal.load(mcal.save(fitted, tmp_path / "a.json"))
    second = mcal.load(mcal.save(first, tmp_path / "b.json"))
    for model in (first, second):
        np.testing.assert_array_equal(model.predict(p, X=X), fitted.predict(p, X=X))
    texts = [b.model_to_string() for b in first.boosters_]
    assert texts == [b.model_to_string() for b in second.boosters_]  # the text is stable from the first load on
    assert all("\nend of trees\n" in t and "\nparameters:\n" not in t for t in texts)


def test_dfmc_checks_its_own_objective_and_leaves_out_the_text_after_the_trees(data):
    X, p, y = data
    model = DFMC(n_jobs=1, random_state=0, n_estimators=5).fit(p, y, X=X)
    state = model.to_dict()
    text = state["state"]["booster"]
    state["state"]["booster"] = text.replace("objective=binary sigmoid:1", "objective=cross_entropy")
    with pytest.raises(ValueError, match="state.booster .*objective= holds 'binary sigmoid:1'; got 'cross_entropy'"):
        DFMC.from_dict(state)
    state["state"]["booster"] = text[: text.index("[verbosity") + 4]
    np.testing.assert_array_equal(DFMC.from_dict(state).predict(p, X=X), model.predict(p, X=X))


# -- compile --------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not is_available("lleaves"), reason="lleaves is not installed (mcal[compiled])")
def test_compile_of_text_that_lightgbm_accepts_and_lleaves_rejects_is_a_value_error(fitted, data):
    X, p, _ = data
    # lleaves 1.3 asserts that a numerical threshold is not 0 (AssertionError); LightGBM predicts with it
    loaded = load_edited(fitted, first_numerical_threshold_to_zero)
    assert loaded.predict(p, X=X).shape == p.shape
    with pytest.raises(
        ValueError,
        match=r"boosters_\[0\] must be LightGBM model text that lleaves .* can compile; "
        r"got text that lleaves rejected \(AssertionError",
    ):
        loaded.compile(n_jobs=1)


# -- fuzz -----------------------------------------------------------------------------------------------------
VALUES = [
    "0",
    "-1",
    "1",
    "2",
    "3",
    "7",
    "100",
    "-100",
    "2147483647",
    "-2147483648",
    "99999999999",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "",
    " ",
    "x",
    "0.5",
    "1e-320",
    "4294967295",
    "9223372036854775807",
    "[",
    ":",
    "=",
    "none",
    "[0:1]",
    "-1:0:1",
]
LINES = [
    "average_output",
    "linear_tree",
    "end of trees",
    "Tree=9",
    "is_linear=1",
    "num_cat=2",
    "pandas_categorical:null",
    "[objective: binary]",
    "feature_infos=none none none",
    "monotone_constraints=1 1 1",
    "parameters:",
    "end of parameters",
    "foo",
    "",
    "tree_sizes=1",
    "objective=",
    "num_leaves=3",
]


def random_edit(text, rng):
    """One random single-line edit or truncation of ``text``; returns the text, a label, and whether only the
    part after ``end of trees`` changed."""
    lines = text.split("\n")
    end = lines.index("end of trees")
    i = int(rng.integers(end + 1)) if rng.random() < 0.8 else int(rng.integers(end + 1, len(lines)))
    kind = rng.choice(["token", "delete", "duplicate", "insert", "truncate"], p=[0.45, 0.15, 0.1, 0.15, 0.15])
    if kind == "truncate":
        cut = int(rng.integers(len(text)))
        return text[:cut], f"truncate at {cut}", cut > len("\n".join(lines[: end + 1]))
    if kind == "token" and "=" in lines[i]:
        key, _, value = lines[i].partition("=")
        tokens = value.split(" ")
        j = int(rng.integers(len(tokens)))
        tokens[j] = str(rng.choice(VALUES))
        lines[i] = f"{key}={' '.join(tokens)}"
        label = f"line {i}: {key}[{j}] = {tokens[j]!r}"
    elif kind == "delete":
        label = f"delete line {i} {lines.pop(i)[:30]!r}"
    elif kind == "duplicate":
        lines.insert(i, lines[i])
        label = f"duplicate line {i} {lines[i][:30]!r}"
    else:
        lines.insert(i, str(rng.choice(LINES)))
        label = f"insert {lines[i]!r} at line {i}"
    return "\n".join(lines), label, i > end


def fuzz(seed, n_cases):
    """Load ``n_cases`` random edits of an MCGrad model's first booster; print each case before trying it (the
    last line names the case that crashed), then the counts of each outcome as JSON. Returns the exit status."""
    X, p, y = make_data()
    model = MCGrad(**FAST).fit(p, y, X=X)
    state = model.to_dict()
    text, before = state["state"]["boosters"][0], model.predict(p, X=X)
    rng = np.random.default_rng(seed)
    outcomes, failures = Counter(), []
    for case in range(n_cases):
        edited, label, after_trees = random_edit(text, rng)
        print(f"case {case}: {label}", flush=True)
        state["state"]["boosters"][0] = edited
        try:
            loaded = MCGrad.from_dict(state)
        except ValueError:
            outcomes["rejected"] += 1
            continue
        outcomes["loaded"] += 1
        after = loaded.predict(p, X=X)
        if not np.array_equal(MCGrad.from_dict(loaded.to_dict()).predict(p, X=X), after, equal_nan=True):
            failures.append(f"{label}: saving and loading again changed the predictions")
        if not np.array_equal(loaded.predict(p[:1], X=X.iloc[:1]), after[:1], equal_nan=True):
            failures.append(f"{label}: one-row predict differs from batch predict")
        if after_trees and not np.array_equal(after, before):
            failures.append(f"{label}: an edit after 'end of trees' changed the predictions")
        if is_available("lleaves") and outcomes["loaded"] % 25 == 1:
            try:
                compiled = loaded.compile(n_jobs=1).predict(p, X=X)
            except ValueError:
                outcomes["not compiled"] += 1
            else:
                outcomes["compiled"] += 1
                if not np.allclose(compiled, after, rtol=0, atol=1e-12, equal_nan=True):
                    failures.append(f"{label}: compiled predictions differ from LightGBM's")
    print(json.dumps(outcomes), flush=True)
    print("\n".join(failures))
    return 1 if failures else 0


@pytest.mark.slow
def test_random_edits_of_model_text_load_or_raise_value_error_and_never_crash():
    """300 seeded single-line edits and truncations of a booster's text, in a subprocess: each loads (and then
    predicts the same after a save and load, one row as in batch, unchanged when only text after the trees was
    edited; some are compiled and agree with LightGBM) or raises ValueError; none crashes or hangs."""
    src = str(Path(mcal.__file__).parents[1])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, __file__, "0", "300"], capture_output=True, text=True, timeout=300, env=env)
    lines = run.stdout.strip().split("\n")
    assert run.returncode == 0, f"exit {run.returncode} at {lines[-1]!r}\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
    outcomes = json.loads(next(line for line in reversed(lines) if line.startswith("{")))
    # both outcomes are common, so the fuzz tests the checks and the loading (and some compiles)
    assert outcomes["rejected"] >= 60 and outcomes["loaded"] >= 60, outcomes


if __name__ == "__main__":
    sys.exit(fuzz(int(sys.argv[1]), int(sys.argv[2])))
