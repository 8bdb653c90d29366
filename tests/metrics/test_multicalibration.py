"""Tests of mcal.metrics.mce, the multicalibration error."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mcal import CalibrationWarning
from mcal.metrics import MCEResult, ecce, ecce_pvalue, ecce_std, mce
from mcal.metrics._multicalibration import segment_ecce
from mcal.segments import concat, from_labels, from_masks, generate_segments

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "mce_reference.json").read_text())


def _calibrated(rng, n=3000):
    X = pd.DataFrame(
        {
            "job": rng.choice(["admin", "tech", "services", "retired"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "age": rng.normal(40, 10, n),
        }
    )
    p = rng.uniform(0.05, 0.95, n)
    return X, (rng.random(n) < p).astype(int), p


def test_hand_computed_two_segments():
    # segment a: p .2 .4 .5, y 0 1 0 -> residual walk /3: -.0667, .1333, -.0333 -> ECCE .2
    #   sigma = sqrt(.16 + .24 + .25) / 3
    # segment b: p .6 .7 .9, y 1 1 0 -> walk /3: .1333, .2333, -.0667 -> ECCE .3, sigma = sqrt(.24+.21+.09)/3
    y = [0, 1, 0, 1, 1, 0]
    p = [0.2, 0.4, 0.5, 0.6, 0.7, 0.9]
    result = mce(y, p, segments=from_labels(["a", "a", "a", "b", "b", "b"]))
    table = result.table.set_index("description")
    assert table.loc["group=a", "ecce"] == pytest.approx(0.2)
    assert table.loc["group=b", "ecce"] == pytest.approx(0.3)
    assert table.loc["group=a", "sigma"] == pytest.approx(np.sqrt(0.65) / 3)
    assert result.mce_sigma == pytest.approx(0.3 / (np.sqrt(0.54) / 3))
    assert result.worst_segment == "group=b"
    # global: sigma = sqrt(sum p(1-p)) / 6; absolute MCE rescales by it; minority prevalence 1/2
    sigma = np.sqrt(np.sum(np.multiply(p, np.subtract(1, p)))) / 6
    assert result.sigma == pytest.approx(sigma)
    assert result.mce_absolute == pytest.approx(result.mce_sigma * sigma)
    assert result.mce_relative == pytest.approx(result.mce_absolute / 0.5)
    assert result.mde == pytest.approx(5 * sigma)


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=[c["name"] for c in REFERENCE["cases"]])
def test_agrees_with_stored_reference_values(case):
    data = pd.DataFrame(REFERENCE["data"])
    X = data[["job", "contact", "age", "visits"]]
    segs = generate_segments(
        X, max_depth=case["max_depth"], min_samples_per_segment=case["min_samples_per_segment"], max_n_segments=None
    )
    weight = data["weight"] if case["weighted"] else None
    result = mce(data["y_true"], data["y_prob"], segments=segs, sample_weight=weight)
    assert result.n_segments == len(case["segments"])
    for ours, key in [
        (result.mce_sigma, "mce_sigma"),
        (result.mce_absolute, "mce_absolute"),
        (result.mce_relative * 100, "mce_relative_percent"),
        (result.mde, "mde"),
        (result.global_ecce, "global_ecce"),
        (result.global_ecce_sigma, "global_ecce_sigma"),
    ]:
        assert ours == pytest.approx(case[key], rel=1e-6), key
    assert result.pvalue == pytest.approx(case["pvalue"], rel=1e-6, abs=1e-12)
    table = result.table.set_index("description")
    expected = pd.DataFrame.from_dict(
        case["segments"], orient="index", columns=["ecce", "sigma", "ecce_sigma", "pvalue"]
    )
    got = table.loc[expected.index, expected.columns]
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-6, atol=1e-12)


def test_single_global_segment_equals_ecce_over_sigma(rng):
    _, y, p = _calibrated(rng, 500)
    w = rng.uniform(0.5, 2, 500)
    result = mce(y, p, sample_weight=w)
    assert result.n_segments == 1 and result.worst_segment == "all"
    expected = ecce(y, p, sample_weight=w) / ecce_std(y, p, sample_weight=w)
    assert result.mce_sigma == pytest.approx(expected, rel=1e-12)
    assert result.global_ecce_sigma == pytest.approx(expected, rel=1e-12)
    assert result.pvalue == pytest.approx(ecce_pvalue(y, p, sample_weight=w), rel=1e-12)


def test_vectorised_segment_ecce_equals_one_segment_at_a_time(rng):
    n = 800
    p = rng.choice(np.linspace(0.05, 0.95, 25), n)  # many ties
    y = (rng.random(n) < p).astype(float)
    w = rng.uniform(0, 3, n)
    X = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.normal(size=n)})
    segs = concat(generate_segments(X, max_n_segments=None), from_masks(rng.random((n, 5)) < 0.3))
    got, sigma, _, global_ecce = segment_ecce(y, p, w, segs)
    assert global_ecce == pytest.approx(ecce(y, p, sample_weight=w), rel=1e-12)
    for k in range(segs.n_segments):
        i = segs.indices(k)
        assert got[k] == pytest.approx(ecce(y[i], p[i], sample_weight=w[i]), rel=1e-10, abs=1e-14)
        assert sigma[k] == pytest.approx(ecce_std(y[i], p[i], sample_weight=w[i]), rel=1e-10)


def test_row_order_does_not_change_the_result_even_with_tied_scores(rng):
    X, y, _ = _calibrated(rng, 1200)
    p = rng.choice([0.1, 0.3, 0.5, 0.7], 1200)
    perm = rng.permutation(1200)
    a = mce(y, p, X=X)
    b = mce(y[perm], p[perm], X=X.iloc[perm].reset_index(drop=True))
    pd.testing.assert_frame_equal(
        a.table.drop(columns="segment").sort_values("description").reset_index(drop=True),
        b.table.drop(columns="segment").sort_values("description").reset_index(drop=True),
        rtol=1e-10,
    )


def test_integer_weight_equals_duplicated_rows_in_ecce(rng):
    n = 300
    labels = rng.choice(["a", "b", "c"], n)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < p).astype(int)
    k = rng.integers(1, 4, n)
    weighted = mce(y, p, segments=from_labels(labels), sample_weight=k).table.set_index("description")
    rep = np.repeat(np.arange(n), k)
    copied = mce(y[rep], p[rep], segments=from_labels(labels[rep])).table.set_index("description")
    np.testing.assert_allclose(weighted["ecce"], copied.loc[weighted.index, "ecce"], rtol=1e-10)
    np.testing.assert_allclose(weighted["weight"], copied.loc[weighted.index, "size"], rtol=1e-12)
    # sigma treats a weight as one scaled observation (w^2 p (1 - p)), as the reference does, not as k copies
    a = labels == "a"
    expected = np.sqrt(np.sum(k[a] ** 2 * p[a] * (1 - p[a]))) / k[a].sum()
    assert weighted.loc["group=a", "sigma"] == pytest.approx(expected, rel=1e-12)


def test_calibrated_sample_has_no_small_pvalue_across_seeds():
    pvalues = []
    for seed in range(20):
        X, y, p = _calibrated(np.random.default_rng(seed))
        pvalues.append(mce(y, p, segments=generate_segments(X, max_depth=1)).pvalue)
    # the minimum over 7 correlated segments, not corrected for multiplicity (as the reference): its median
    # sits near 0.16 (40 seeds) and it rarely drops below 0.01; a miscalibrated sample gives < 1e-6 (below)
    assert np.median(pvalues) > 0.05 and np.mean(np.less(pvalues, 0.01)) <= 0.15


def test_miscalibration_in_one_segment_is_flagged_there(rng):
    X, _, p = _calibrated(rng, 6000)
    shifted = np.where(X["job"] == "admin", np.clip(p + 0.15, 0, 1), p)
    y = (rng.random(6000) < shifted).astype(int)
    result = mce(y, p, segments=generate_segments(X, max_depth=2))
    assert result.worst_segment == "job=admin" and result.pvalue < 1e-6
    table = result.table.set_index("description")
    assert (table.loc[["job=tech", "job not in {admin, tech}"], "ecce_sigma"] < 4).all()


def test_table_is_sorted_worst_first_and_points_to_segments(rng):
    X, y, p = _calibrated(rng, 2000)
    segs = generate_segments(X)
    table = mce(y, p, segments=segs).table
    assert list(table.columns) == [
        "segment",
        "description",
        "size",
        "weight",
        "mean_prediction",
        "mean_outcome",
        "direction",
        "ecce",
        "sigma",
        "ecce_sigma",
        "pvalue",
        "pvalue_adjusted",
    ]
    assert table["ecce_sigma"].is_monotonic_decreasing
    assert np.array_equal(table["size"], segs.sizes[table["segment"]])
    assert table["description"].tolist() == [segs.descriptions[k] for k in table["segment"]]


def test_x_shortcut_equals_generated_segments(rng):
    X, y, p = _calibrated(rng, 1000)
    a, b = mce(y, p, X=X), mce(y, p, segments=generate_segments(X))
    pd.testing.assert_frame_equal(a.table, b.table)


def test_boolean_array_segments_equal_from_masks(rng):
    X, y, p = _calibrated(rng, 500)
    masks = np.column_stack([X["job"] == "admin", X["age"] > 40])
    a, b = mce(y, p, segments=masks), mce(y, p, segments=from_masks(masks))
    pd.testing.assert_frame_equal(a.table, b.table)


def test_float32_scores_give_the_float64_result(rng):
    X, y, p = _calibrated(rng, 800)
    p32 = p.astype(np.float32)
    a, b = mce(y, p32, X=X), mce(y, p32.astype(np.float64), X=X)
    assert a.mce_sigma == b.mce_sigma


def test_zero_weight_segment_has_nan_statistics_and_comes_last(rng):
    n = 100
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.random(n) < p).astype(int)
    w = np.ones(n)
    w[:10] = 0
    masks = np.zeros((n, 2), dtype=bool)
    masks[:10, 0] = True
    masks[10:, 1] = True
    table = mce(y, p, segments=masks, sample_weight=w).table
    assert table["segment"].tolist() == [1, 0]
    assert np.isnan(table["ecce"].iloc[1]) and table["weight"].iloc[1] == 0


def test_segment_with_certain_scores_and_a_surprise_is_infinitely_significant():
    y = [1, 0, 1, 0]
    p = [0.0, 0.0, 0.5, 0.5]
    result = mce(y, p, segments=from_labels(["sure", "sure", "coin", "coin"]))
    assert result.worst_segment == "group=sure"
    assert result.mce_sigma == np.inf and result.pvalue == 0.0


def test_single_value_segment_column_gives_the_global_result(rng):
    _, y, p = _calibrated(rng, 300)
    one = mce(y, p, segments=from_labels(["same"] * 300))
    assert one.mce_sigma == pytest.approx(mce(y, p).mce_sigma, rel=1e-12)


def test_all_missing_features_leave_the_global_segment(rng):
    _, y, p = _calibrated(rng, 200)
    with pytest.warns(CalibrationWarning, match="single level"):
        result = mce(y, p, X=pd.DataFrame({"gone": [np.nan] * 200}))
    assert result.n_segments == 1 and result.worst_segment == "all"


def test_cap_on_generated_segments_is_reported(rng):
    X, y, p = _calibrated(rng, 1000)
    X["c"] = rng.choice(list("abc"), 1000)
    X["d"] = rng.choice(list("uvw"), 1000)
    result = mce(y, p, segments=generate_segments(X, max_n_segments=20))
    assert result.n_segments == 20 and result.capped


def test_result_is_frozen():
    result = mce([0, 1], [0.3, 0.6])
    assert isinstance(result, MCEResult)
    with pytest.raises(AttributeError):
        result.mce_sigma = 0.0


@pytest.mark.parametrize(
    ("y", "p", "match"),
    [
        ([0, 1], [0.2, np.nan], "y_prob must be finite"),
        ([0, 2], [0.2, 0.3], "y_true must be binary"),
        ([], [], "must not be empty"),
        ([0, 1, 1], [0.2, 0.3], "same number of samples"),
        ([0, 1], [0.2, 1.3], "y_prob must lie in"),
    ],
)
def test_bad_labels_or_scores_raise(y, p, match):
    with pytest.raises(ValueError, match=match):
        mce(y, p)


def test_bad_segments_raise(rng):
    X, y, p = _calibrated(rng, 50)
    with pytest.raises(ValueError, match="either X .* or segments"):
        mce(y, p, X=X, segments=from_labels(X["job"]))
    with pytest.raises(ValueError, match="cover 50 rows"):
        mce(y, p, segments=from_labels(["a"] * 40))
    with pytest.raises(ValueError, match="from_labels"):
        mce(y, p, segments=X["job"].to_numpy())
    with pytest.raises(ValueError, match="positive total sample weight"):
        mce(y, p, segments=from_masks(np.zeros(50, dtype=bool)))
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        mce(y, p, sample_weight=np.zeros(50))


@pytest.mark.parametrize("segments, shown", [("job", "str"), (3, "int"), ({"a": [True] * 4}, "dict")])
def test_segments_that_are_not_segments_or_an_array_raise_type_error(segments, shown):
    # these were a ValueError about the shape () of the array numpy made of them
    with pytest.raises(
        TypeError,
        match=rf"^segments must be a Segments or a boolean array of shape \(n_samples, "
        rf"n_segments\); got {shown}$",
    ):
        mce([0, 1, 0, 1], [0.2, 0.4, 0.6, 0.8], segments=segments)


@pytest.mark.filterwarnings("ignore")  # the reference's own pandas deprecations and divisions by zero
@pytest.mark.parametrize(
    ("n", "weights", "zero_weights", "max_depth"),
    [(200, True, True, 2), (12, False, False, 2), (60, True, False, 0)],
    ids=["zero_weights_and_one_row_segments", "twelve_rows", "single_global_segment"],
)
def test_every_segment_agrees_with_mcgrad_on_tiny_segments_and_zero_weights(rng, n, weights, zero_weights, max_depth):
    reference = pytest.importorskip("mcgrad.metrics")
    df = pd.DataFrame({"a": rng.choice(["x", "y", "z", "u"], n, p=[0.5, 0.3, 0.15, 0.05]),
                       "b": rng.integers(0, 3, n).astype(float), "p": rng.uniform(0.01, 0.99, n)})  # fmt: skip
    df["y"] = (rng.random(n) < np.clip(df["p"] + 0.1 * (df["a"] == "x"), 0, 1)).astype(int)
    df["w"] = rng.choice([0.5, 1.0, 2.0, 3.0], n) if weights else 1.0
    if zero_weights:
        df.loc[df.index[: n // 10], "w"] = 0.0
    ref = reference.MulticalibrationError(
        df, label_column="y", score_column="p", weight_column="w" if weights else None,
        categorical_segment_columns=["a"] if max_depth else None, numerical_segment_columns=["b"] if max_depth else None,
        max_depth=max_depth, min_samples_per_segment=1, max_n_segments=None, precision_dtype="float64",
    )  # fmt: skip
    segs = generate_segments(df[["a", "b"]], max_depth=max_depth, min_samples_per_segment=1, max_n_segments=None)
    ours = mce(df["y"], df["p"], segments=segs, sample_weight=df["w"] if weights else None)
    for got, key in [(ours.mce_sigma, "mce_sigma"), (ours.mce_absolute, "mce"), (ours.mce_relative * 100, "mce_relative"),
                     (ours.pvalue, "mce_pvalue"), (ours.mde, "mde"), (ours.global_ecce, "global_ecce")]:  # fmt: skip
        assert got == pytest.approx(float(getattr(ref, key)), rel=1e-9, abs=1e-15), key
    # segment by segment, matched by their rows (the reference sorts its frame by score)
    rows = {tuple(segs.indices(k)): k for k in range(segs.n_segments)}
    masks = ref._segments[0].reshape(-1, n)[: len(ref.segments_ecce)]
    original = ref.df["index"].to_numpy()
    table = ours.table.set_index("segment")
    assert len(masks) == segs.n_segments
    for j, mask in enumerate(masks):
        k = rows[tuple(np.sort(original[mask]))]
        np.testing.assert_allclose(table.loc[k, ["ecce", "ecce_sigma"]].to_numpy(dtype=float),
                                   [ref.segments_ecce[j], ref.segments_ecce_sigma[j]], rtol=1e-9, atol=1e-15)  # fmt: skip


def test_segment_ending_on_the_score_that_starts_the_next_segment_keeps_its_last_step():
    # segment a: p .2 .5, y 0 1 -> walk /2: -.1, .15 -> ECCE .25; segment b starts at the same score .5
    p, y = np.array([0.2, 0.5, 0.5, 0.7]), np.array([0.0, 1.0, 0.0, 1.0])
    masks = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=bool)
    table = mce(y, p, segments=from_masks(masks, names=["a", "b"])).table.set_index("description")
    assert table.loc["a", "ecce"] == pytest.approx(0.25, abs=1e-15)
    assert table.loc["b", "ecce"] == pytest.approx(ecce(y[2:], p[2:]), abs=1e-15)


def test_segments_with_equal_evidence_are_listed_in_segment_order():
    # two segments of certain, wrong scores: ECCE > 0 with sigma 0 puts both at inf, a tie broken by number
    p = np.array([0.0, 0.0, 1.0, 1.0, 0.4, 0.6])
    y = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    masks = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], dtype=bool)
    result = mce(y, p, segments=from_masks(masks, names=["a", "b", "rest"]))
    assert result.table["ecce_sigma"].tolist()[:2] == [np.inf, np.inf]
    assert result.table["segment"].tolist() == [0, 1, 2]
    assert result.worst_segment == "a"


def test_segment_of_certain_and_correct_scores_has_sigma_scale_zero_and_pvalue_one():
    # scores 0 and 1 that match their labels: ECCE 0 and sigma 0, the limit 0 / 0 -> 0 (as ecce_pvalue's 1.0)
    p = np.array([0.0, 1.0, 0.0, 0.3, 0.6, 0.8])
    y = np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    certain = np.array([1, 1, 1, 0, 0, 0], dtype=bool)
    table = mce(y, p, segments=from_masks(np.column_stack([certain, ~certain]), names=["certain", "rest"])).table
    row = table.set_index("description").loc["certain"]
    assert (row["ecce"], row["sigma"], row["ecce_sigma"], row["pvalue"]) == (0.0, 0.0, 0.0, 1.0)


def _coded(rng, n=2000):
    """An integer-coded column (codes 1..5, distinct frequencies) miscalibrated on code 4, and its string twin."""
    code = rng.choice([1, 2, 3, 4, 5], n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < np.where(code == 4, p**3, p)).astype(int)
    return pd.DataFrame({"code": code}), pd.DataFrame({"code": code.astype(str)}), y, p


def test_integer_column_declared_categorical_gives_the_mce_of_its_strings(rng):
    ints, strings, y, p = _coded(rng)
    declared, as_strings = mce(y, p, X=ints, categorical_features=["code"]), mce(y, p, X=strings)
    assert declared.mce_sigma == as_strings.mce_sigma and declared.n_segments == as_strings.n_segments
    np.testing.assert_array_equal(declared.table["ecce"], as_strings.table["ecce"])
    assert mce(y, p, X=ints).mce_sigma != declared.mce_sigma  # undeclared, the codes are cut into ranges
    assert mce(y, p, X=ints, categorical_features=[0]).mce_sigma == declared.mce_sigma  # by position


def test_categorical_features_without_generated_segments_is_refused(rng):
    ints, _, y, p = _coded(rng, 300)
    with pytest.raises(
        ValueError,
        match=r"pass either segments or categorical_features, not both; got segments and "
        r"categorical_features=\['code'\]",
    ):
        mce(y, p, segments=generate_segments(ints), categorical_features=["code"])
    with pytest.raises(ValueError, match=r"categorical_features applies only to segments generated from X; got X=None"):
        mce(y, p, categorical_features=["code"])
    with pytest.raises(ValueError, match="categorical_features"):
        mce(y, p, X=ints, categorical_features=["age"])  # a column X lacks


def test_readme_ten_lines_print_the_worst_segments_by_description(tmp_path, monkeypatch, capsys):
    # issue 32: the README printed res.table.head(10), whose description column pandas drops at its default width
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    code = readme.split("## Ten lines", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    rng = np.random.default_rng(0)
    n = 3000
    region = rng.choice(["north_atlantic_coast", "south", "east"], 2 * n)
    p = rng.uniform(0.05, 0.95, 2 * n)
    y = (rng.uniform(size=2 * n) < np.clip(p + 0.25 * (region == "north_atlantic_coast"), 0, 1)).astype(int)
    X = pd.DataFrame({"region": pd.Categorical(region), "tenure_in_months": rng.integers(1, 100, 2 * n)})
    monkeypatch.chdir(tmp_path)
    scope = {"p_calib": p[:n], "y_calib": y[:n], "features_calib": X[:n], "p_test": p[n:], "y_test": y[n:],
             "features_test": X[n:].reset_index(drop=True)}  # fmt: skip
    scope["p_test"] = np.clip(p[n:] - 0.2 * (region[n:] == "south"), 0.01, 0.99)  # the calibrator cannot know
    exec(code, scope)
    lines = capsys.readouterr().out.splitlines()
    res = scope["res"]
    start = next(i for i, line in enumerate(lines) if line.startswith("segment "))
    assert lines[start - 1].startswith(f"MCE {res.mce_sigma:.3g} sigma")
    assert lines[start + 1].startswith(res.worst_segment + " ")  # the worst segment named first, not numbered
    assert _listed(lines[start:]) == res.table["description"].head(10).tolist()
    assert max(len(line) for line in lines[start - 1 :]) <= 100
    assert (tmp_path / "model.json").exists()


def _listed(lines):
    """The descriptions of a summary's table (from its header line on), each joined from its wrapped lines."""
    size = lines[0].index("  rows")
    names = []
    for line in lines[1:]:
        if line[size:].strip():  # a row of numbers starts a segment
            names.append(line[:size].rstrip())
        else:
            names[-1] += " " + line.strip()
    return names


def test_summary_wraps_long_descriptions_within_the_width():
    rng = np.random.default_rng(2)
    n = 800
    X = pd.DataFrame({"feature_" + k: rng.choice(["first_value", "second_value"], n) for k in "xyz"})
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.uniform(size=n) < p).astype(int)
    res = mce(y, p, X=X)
    lines = res.summary(n_worst=5, width=80).splitlines()
    assert max(len(line) for line in lines) <= 80 and len(lines) > 2 + 5  # some descriptions take two lines
    start = next(i for i, line in enumerate(lines) if line.startswith("segment "))
    assert " ".join(lines[:start]) == str(res).splitlines()[0]  # the MCE line, wrapped
    assert _listed(lines[start:]) == res.table["description"].head(5).tolist()
    assert str(res) == res.summary()


def test_summary_of_no_segment_is_the_mce_line_and_bad_sizes_are_refused_by_name():
    # issue 32 item 5: n_worst=0 raised "zip() argument 2 is longer than argument 1"; -1 left out the last segment
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 0.9, 500)
    res = mce((rng.uniform(size=500) < p).astype(int), p, X=pd.DataFrame({"g": rng.choice(["a", "b"], 500)}))
    assert res.summary(n_worst=0) == res.summary().splitlines()[0]
    for bad in ({"n_worst": -1}, {"n_worst": 1.5}, {"width": 0}, {"width": "wide"}):
        (name,) = bad
        with pytest.raises((TypeError, ValueError), match=f"^{name} must"):
            res.summary(**bad)
