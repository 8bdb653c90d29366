"""The paper benchmarks (``benchmarks/``) on tiny data, so that they cannot rot, and their protocol pieces.

The benchmarks read the shared datasets (``../shared/data`` beside the repository, or ``$MCAL_DATA_DIR``); every
test here skips with the path it looked for when they are absent.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.benchmarks.scripts import run_all as _run_all
from tests.benchmarks.scripts import script as _script

# the benchmarks and their helpers on real data: slow, all of them (tests/README.md)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bench():
    """The shared helpers of the benchmarks and run_all.py."""
    return {name: _script(name) for name in ("_datasets", "_evaluation", "_methods", "_common")} | {
        "run_all": _run_all()
    }


def _load(bench, key, **kw):
    try:
        return bench["_datasets"].load(key, **kw)
    except bench["_datasets"].DataUnavailable as exc:
        pytest.skip(f"shared data not available: {exc}")


def _csv(path: Path) -> tuple[dict, pd.DataFrame]:
    """The header and rows of a results CSV, read by the benchmarks' own reader."""
    return _script("_common").read_results(path)


def test_protocol_split_sizes_and_fixed_test_rows(bench):
    split = bench["_datasets"].protocol_split
    tr, va, te = split(45_211, 15)
    assert (len(tr), len(va), len(te)) == (27_127, 9_042, 9_042)  # the protocol's Bank Marketing sizes
    assert len(np.intersect1d(tr, va)) == len(np.intersect1d(tr, te)) == len(np.intersect1d(va, te)) == 0
    _tr2, va2, te2 = split(45_211, 25)
    assert np.array_equal(te, te2) and not np.array_equal(va, va2)  # test fixed by seed 42, validation by the seed


def test_protocol_split_leaves_global_rng_untouched(bench):
    np.random.seed(123)
    expected = np.random.random()
    np.random.seed(123)
    bench["_datasets"].protocol_split(100, 15)
    assert np.random.random() == expected


def test_bank_marketing_groups_match_the_protocol_counts(bench):
    ds = _load(bench, "bank_marketing")
    sizes = {k: int(v.sum()) for k, v in ds.groups.items()}
    assert ds.X.shape == (45_211, 41) and len(sizes) == 15 and not ds.dropped_groups
    assert sizes["job=blue-collar"] == 9732 and sizes["age<30"] == 3050 and sizes["30<=age<40"] == 17359
    assert sizes["age>=50"] == 12185 and sizes["education=tertiary"] == 13301


def test_credit_default_keeps_thirteen_groups_and_118_features(bench):
    ds = _load(bench, "credit_default")
    assert ds.X.shape == (30_000, 118)
    assert ds.dropped_groups == {"female & age>65": 40, "education=other": 123}
    assert len(ds.groups) == 13 and int(ds.groups["married & age>60"].sum()) == 225


def test_credit_default_base_model_reproduces_the_paper_row(bench):
    """Tables 5/6 base row, Credit Default (paper: log loss 0.4333, PR-AUC 0.5319, ECCE 0.0077, MCE u 3.5652)."""
    ds = _load(bench, "credit_default")
    tr, _va, te = bench["_datasets"].protocol_split(ds.n, 15)
    scores, info = bench["_common"].base_model_scores(ds, tr, {"test": te}, cache_key="test", cache=None)
    assert info["converged"]
    y, p = ds.y[te], scores["test"]
    ev = bench["_evaluation"]
    assert abs(ev.M.log_loss(y, p) - 0.4333) < 5e-4 and abs(ev.M.pr_auc(y, p) - 0.5319) < 5e-4
    assert abs(ev.M.ecce(y, p) - 0.0077) < 5e-4
    assert (
        abs(ev.unspecified_block(y, p, ds.frame.iloc[te], ds.categorical, ds.numerical)["mce_sigma_u"] - 3.5652) < 0.05
    )


def test_protocol_segments_follow_the_reference_rule(bench, rng):
    """Hand-checkable case: one categorical with 4 values (top 2 + other) and one numerical cut at tertiles."""
    frame = pd.DataFrame(
        {"c": pd.Categorical(rng.choice(list("abcd"), 300, p=[0.4, 0.3, 0.2, 0.1])), "x": rng.normal(size=300)}
    )
    masks, names = bench["_evaluation"].protocol_segments(frame, ["c"], ["x"], rng.random(300), max_depth=1)
    assert names[0] == "all" and len(masks) == 1 + 3 + 3
    assert {n for n in names if n.startswith("c=")} == {"c=a", "c=b", "c=__OTHER"}
    assert masks[1:4].sum(axis=0).tolist() == [1] * 300  # the levels of a feature partition the rows
    assert sorted(masks[4:].sum(axis=1).tolist()) == [100, 100, 100]


def test_protocol_segments_stop_at_the_reference_cap(bench, rng):
    frame = pd.DataFrame({f"c{i}": pd.Categorical(rng.choice(list("abc"), 2000)) for i in range(8)})
    masks, _ = bench["_evaluation"].protocol_segments(frame, list(frame), [], rng.random(2000))
    assert len(masks) == 1000


def test_unspecified_mce_agrees_with_reference_package(bench, rng):
    mc = pytest.importorskip("mcgrad.metrics")
    n = 3000
    frame = pd.DataFrame(
        {"c": rng.choice(["u", "v", "w", "z"], n), "k": rng.choice(["p", "q"], n), "x": rng.normal(size=n)}
    )
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.random(n) < np.clip(p + 0.1 * (frame["c"] == "u"), 0, 1)).astype(int)
    ours = bench["_evaluation"].unspecified_block(
        y, p, frame.astype({"c": "category", "k": "category"}), ["c", "k"], ["x"]
    )
    ref = mc.MulticalibrationError(
        df=frame.assign(label=y, score=p),
        label_column="label",
        score_column="score",
        categorical_segment_columns=["c", "k"],
        numerical_segment_columns=["x"],
    )
    assert ours["mce_sigma_u"] == pytest.approx(float(ref.mce_sigma), rel=1e-4)
    assert ours["n_segments_u"] == ref.total_number_segments  # known once the reference has computed
    assert ours["mce_abs_u"] == pytest.approx(float(ref.mce), rel=1e-4)


def test_prespecified_block_is_the_maximum_over_groups(bench, rng):
    """MCE p = max ECCE_g / sigma_g and MCE*sigma p = max ECCE_g, against a loop over the groups."""
    M = bench["_evaluation"].M
    n = 2000
    p = rng.uniform(0.05, 0.95, n)
    groups = {"a": rng.random(n) < 0.3, "b": rng.random(n) < 0.6, "c": rng.random(n) < 0.1}
    y = (rng.random(n) < np.clip(p + 0.15 * groups["a"], 0, 1)).astype(int)
    out = bench["_evaluation"].prespecified_block(y, p, groups)
    ecce = [M.ecce(y[m], p[m]) for m in groups.values()]
    ratio = [e / M.ecce_std(y[m], p[m]) for e, m in zip(ecce, groups.values(), strict=False)]
    assert out["mce_sigma_p"] == pytest.approx(max(ratio), rel=1e-9)
    assert out["mce_abs_p"] == pytest.approx(max(ecce), rel=1e-9)
    assert out["max_smece_p"] == round(max(M.smece(y[m], p[m]) for m in groups.values()), 4)


def test_field_methods_are_unavailable_on_data_without_a_field(bench):
    methods = bench["_methods"]
    listed = methods.with_registered(methods.MCGRAD_PAPER_METHODS)

    class Tiny:  # a dataset without a field
        field = None
        name = "tiny"

    for m in listed:
        if "field" in m.inputs:
            with pytest.raises(methods.Unavailable, match="no field column"):
                methods.build(m, Tiny(), 0)


def test_quick_benchmarks_run_end_to_end(bench, tmp_path):
    _load(bench, "bank_marketing")
    status = bench["run_all"].main(
        [
            "--quick",
            "--smoke",
            "--max-rows",
            "1000",
            "--mcgrad-datasets",
            "bank_marketing,hmda_boston",
            "--mcnet-datasets",
            "online_shoppers",
            "--out-dir",
            str(tmp_path),
            "--no-cache",
            "--blas-threads",
            "1",
        ]
    )
    assert status == 0
    for name in ("paper_mcgrad", "paper_mcnet"):
        header, raw = _csv(tmp_path / f"{name}.csv")
        assert {"mcal version", "git commit", "date (UTC)", "seeds", "cores"} <= set(header)
        assert (tmp_path / f"{name}.md").read_text(encoding="utf-8").startswith("# ")
        assert set(raw["status"]) <= {"ok", "not available in this run"}
        assert raw.loc[raw["status"] != "ok", "reason"].notna().all()
    _, raw = _csv(tmp_path / "paper_mcgrad.csv")
    methods = bench["_methods"]
    expected = {m.name for m in methods.with_registered(methods.MCGRAD_PAPER_METHODS)} | {"base_model", "HKRR"}
    for ds_name in ("BankMarketing", "HMDABoston"):
        sub = raw[raw["dataset"] == ds_name]
        assert set(sub["method"]) == expected  # nothing left out silently
        ok = sub[sub["status"] == "ok"]
        assert np.isfinite(ok[["log_loss", "pr_auc", "ecce", "max_smece_p"]]).all().all()
        # MCE is +inf, as in the reference, when a segment has scores of exactly 0 or 1 and a label against them
        assert (ok[["mce_sigma_u", "mce_sigma_p"]] > 0).all().all()
    temp = raw[(raw["method"] == "Temperature") & (raw["dataset"] == "BankMarketing")].iloc[0]
    base = raw[(raw["method"] == "base_model") & (raw["dataset"] == "BankMarketing")].iloc[0]
    assert temp["roc_auc"] == pytest.approx(base["roc_auc"], abs=1e-12)  # a strictly monotone map keeps the AUC


@pytest.fixture(scope="module")
def input_safety():
    return _script("input_safety")


def test_input_safety_cases_all_go_as_expected_for_mcal(input_safety):
    # The mcal half of benchmarks/package/input_safety.py: every bad-input case is refused with a message naming the
    # argument or column, and every valid edge case (scores 0 and 1, missing values, an unseen category with its
    # warning) gives finite predictions. The reference half needs the mcgrad package, which is not a dependency.
    train, test = input_safety.data()
    verdicts = {}
    for case in input_safety.CASES:
        result = input_safety.outcome(input_safety.run_mcal, case, case.train(train), case.test(test))
        verdicts[case.name] = (input_safety.verdict(case, result), result["detail"])
    assert {name: v for name, v in verdicts.items() if v[0] != "yes"} == {}
    assert len(verdicts) == 23


def test_input_safety_counts_a_message_without_the_keywords_as_unclear(input_safety):
    case = input_safety.Case("x", "refuse", ("weight",))

    def fails(*_):
        raise ValueError("could not convert string to float: 'abc'")

    def names_it(*_):
        raise ValueError("sample_weight must be finite")

    assert input_safety.outcome(fails, case, None, None)["outcome"] == "unclear error"
    assert input_safety.outcome(names_it, case, None, None)["outcome"] == "error"
    assert input_safety.verdict(case, {"outcome": "accepted", "detail": "finite predictions", "nan": 0}) == "no"


def test_bootstrap_coverage_quick_run_and_population_values():
    # benchmarks/metrics/bootstrap_coverage.py on 3 tiny data sets; its population values against closed forms:
    # p ~ U(0, 1) calibrated: Brier E[p(1-p)] = 1/6, log loss E[h(p)] = 1/2, ROC-AUC 4 * (1/3 - 1/8) = 5/6
    coverage = _script("bootstrap_coverage")
    values = coverage.population_values(weighted=False)
    assert values["brier_score"] == pytest.approx(1 / 6) and values["log_loss"] == pytest.approx(0.5)
    assert values["roc_auc"] == pytest.approx(5 / 6)
    # weight 10 below p = 0.2: (1/6 + 9 * (0.02 - 0.008/3)) / 2.8
    assert coverage.population_values(weighted=True)["brier_score"] == pytest.approx((1 / 6 + 9 * 0.052 / 3) / 2.8)
    table = coverage.main(["--quick"])
    assert len(table) == 10 and table["coverage_percentile"].between(0, 1).all()


def test_bootstrap_intervals_quick_run_and_population_values_against_a_large_sample():
    # benchmarks/metrics/bootstrap_intervals.py on 2 tiny data sets per scenario; its population values (on a grid of
    # scores, labels replaced by their expectation) against the metrics of 2 million rows drawn as the benchmark does
    from mcal.metrics import ecce, ece, f_rce

    intervals = _script("bootstrap_intervals")
    assert all(v == pytest.approx(0, abs=1e-12) for v in intervals.population_values("calibrated", 1000).values())
    truth = intervals.population_values("clear", 1000)
    rng = np.random.default_rng(0)
    n = 2_000_000
    field, p = rng.integers(5, size=n), rng.uniform(size=n)
    y = (rng.uniform(size=n) < intervals.conditional_mean(p, field, "clear")).astype(float)
    assert ece(y, p) == pytest.approx(truth["ece"], abs=2e-3) and truth["ece"] > 0.02
    assert ecce(y, p) == pytest.approx(truth["ecce"], abs=1.5e-3) and truth["ecce"] > 0.01
    assert f_rce(y, p, field=field) == pytest.approx(truth["f_rce"], abs=2e-3) and truth["f_rce"] > 0.02
    # ECCE / sigma and MCE / sigma grow as sqrt(n) on miscalibrated data
    assert intervals.population_values("clear", 4000)["mce_sigma"] == pytest.approx(2 * truth["mce_sigma"])
    table = intervals.main(["--quick"])
    assert len(table) == 5 * 3 * 3 and set(table["method"]) == {"percentile", "basic", "bca"}
    assert table["coverage"].between(0, 1).all()


def test_bootstrap_speed_quick_run_gives_the_intervals_of_one_call_per_resample():
    speed = _script("bootstrap_speed")
    table = speed.main(["--quick"])
    assert len(table) == 1 and table["max_interval_diff"].iloc[0] < 1e-12
    assert (table[["table_cpu_s", "evaluate_ci_cpu_s", "evaluate_ci_segments_cpu_s"]] > 0).all().all()


def test_regression_benchmark_quick_mode_writes_both_implementations_on_every_data_set(tmp_path):
    pytest.importorskip(
        "mcgrad.methods",
        reason="the regression benchmark compares against mcgrad 0.1.5 (the bench "
        "dependency group), which is not installed",
    )
    bench = _script("regression_vs_reference")
    if not (bench.DATA / "credit_default").exists():
        pytest.skip(f"shared data not available: {bench.DATA}")
    out = tmp_path / "regression"
    assert bench.main(["--quick", "--out", str(out)]) == 0
    _, table = _csv(Path(f"{out}.csv"))
    assert set(table["dataset"]) == {"synthetic_3000", "census_weeks", "credit_limit"}
    for _, group in table.groupby("dataset"):
        assert set(group["impl"]) == {"base prediction", "mcgrad 0.1.5", "mcal"}
        fitted = group[group["impl"] != "base prediction"]
        assert np.isfinite(fitted[["fit_s", "mse", "mce_sigma", "fit_added_mib"]]).all().all()
        # both calibrate: the held-out MSE falls below the base prediction's
        assert (fitted["mse"] < group.loc[group["impl"] == "base prediction", "mse"].iloc[0]).all()
    assert "| fit time, reference / mcal" in out.with_suffix(".md").read_text()


def test_mcnet_synthetic_quick_mode_runs_end_to_end(tmp_path):
    # benchmarks/mcnet/mcnet_synthetic.py --quick: two tiny logs, every method, the tables and the raw CSV
    module = _script("mcnet_synthetic")
    assert module.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    header, raw = _csv(tmp_path / "mcnet_synthetic.csv")
    assert {"mcal version", "git commit", "date (UTC)", "seeds", "cores"} <= set(header)
    assert set(raw["case"]) == set(module.QUICK_CASES)
    field_case = raw[raw["generator"] == "power"]
    assert {"MCNet-Field", "PerField-Isotonic", "NeuCalib", "AdaCalib", "MCGrad"} <= set(field_case["method"])
    assert np.isfinite(raw[["msd_truth", "log_loss", "roc_auc"]]).all().all()
    nets = raw[raw["method"].str.startswith("MCNet")]
    assert (nets["field_auc_drop"].abs() < 1e-12).all()  # monotone in the score within every field
    assert "## Targets" in (tmp_path / "mcnet_synthetic.md").read_text(encoding="utf-8")


def test_ctr_benchmark_quick_mode_runs_every_method_and_states_each_effect(bench, tmp_path):
    _load(bench, "census_kdd")
    ctr = _script("paper_mcnet_ctr")
    assert ctr.main(["--quick", "--no-cache", "--arms", "A,B", "--n-boot", "20", "--out-dir", str(tmp_path)]) == 0
    header, raw = _csv(tmp_path / "paper_mcnet_ctr.csv")
    assert {"mcal version", "git commit", "seeds", "MCNet defaults"} <= set(header)
    expected = {"Base"} | {m.name for m in ctr.METHODS}
    for arm in ("A", "B"):
        assert set(raw.loc[raw["arm"] == arm, "method"]) == expected  # nothing left out silently
    ok = raw[raw["status"] == "ok"]
    assert np.isfinite(ok[["pcoc", "f_rce", "auc", "log_loss"]]).all().all()
    base, platt = (ok[(ok["arm"] == "A") & (ok["method"] == m)].iloc[0] for m in ("Base", "Platt Scaling"))
    assert platt["auc"] == pytest.approx(base["auc"], abs=1e-12)  # a strictly monotone map keeps the AUC
    md = (tmp_path / "paper_mcnet_ctr.md").read_text(encoding="utf-8")
    for claim in (
        "an MCNet variant has the lowest F-RCE",
        "MCNet-Field beats MCNet-None",
        "the field-balance regularizer lowers the per-field PCOC STD",
        "MCNet-None beats NeuCalib",
        "Noise floor",
    ):
        assert claim in md


def test_ctr_bootstrap_sums_equal_mcal_metrics_at_unit_weights(bench, rng):
    stats = _script("_ctr_stats")
    n = 3000
    field = rng.choice(["a", "b", "c"], n)
    p = rng.uniform(0.01, 0.6, n)
    y = (rng.random(n) < np.clip(p * np.where(field == "a", 1.5, 1.0), 0, 1)).astype(float)
    stats.check_against_mcal(y, p, field)  # raises if the vectorized F-RCE, log loss or STD drift from mcal
    floor = stats.noise_floor(p, field, 400, 0)
    # labels drawn from p: the F-RCE is pure noise, far below that of p against labels 1.5 times as likely in "a"
    assert floor["mean"] < floor["q95"] < 100 * bench["_evaluation"].M.f_rce(y, p, field=field)


def test_calibrated_classifier_quick_run(bench):
    # benchmarks/baselines/calibrated_classifier.py on 3000 rows of one dataset: every method scored, the base model at 0
    _load(bench, "bank_marketing", max_rows=10)
    module = _script("calibrated_classifier")
    table = module.main(["--quick"])
    assert len(table) == 7 and table.loc[table["method"] == "base model", "vs base"].item() == 0.0
    jeffreys = table.loc[table["method"] == "mcal cv=5 ensemble", "exact_0_or_1"].item()
    assert jeffreys == 0  # the Jeffreys end blocks never predict exactly 0 or 1


def test_input_safety_forged_model_files_are_refused_or_loaded_as_expected(input_safety):
    # benchmarks/package/model_file_safety.py on a thousandth of the trees: the compact forgery is refused by the count of
    # trees per byte, the file as dense as LightGBM writes and the fitted model load
    files = _script("model_file_safety").run(quick=True)
    assert list(files["as_expected"]) == ["yes"] * 3, files[["case", "outcome", "detail"]].to_string()
    assert "at least 200 bytes per tree; got 1200 trees in" in files["detail"].iloc[1]


@pytest.mark.parametrize("script", ["mcgrad_overconfident", "mcgrad_mce"])
def test_mcgrad_issue_20_benchmarks_quick_mode_writes_every_method(bench, tmp_path, script):
    _load(bench, "credit_default" if script == "mcgrad_overconfident" else "census_kdd", max_rows=10)
    module = _script(script)
    assert module.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    header, raw = _csv(tmp_path / f"{script}.csv")
    assert {"mcal version", "git commit", "seeds", "threads"} <= set(header)
    expected = set(module.methods("field")) if script == "mcgrad_overconfident" else set(module.VARIANTS)
    assert expected <= set(raw["method"])
    assert np.isfinite(raw["log_loss" if script == "mcgrad_overconfident" else "log loss"]).all()


def test_mcgrad_memory_quick_mode_charges_every_phase(tmp_path):
    module = _script("mcgrad_memory")
    assert module.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    _, raw = _csv(tmp_path / "mcgrad_memory_quick.csv")
    phases = {"encode and bin X (LightGBM Dataset)", "early-stopping rounds", "refit rounds", "whole fit"}
    assert phases <= set(raw["phase"])
    assert (raw["peak_mib"] > 0).all() and (raw["rows"] == 20_000).all()


def test_mcgrad_profile_quick_mode_accounts_for_the_whole_fit(tmp_path):
    module = _script("mcgrad_profile")
    assert module.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    _, raw = _csv(tmp_path / "mcgrad_profile_quick.csv")
    assert "LightGBM trees (Booster.update)" in set(raw["part"])
    assert (raw["seconds"] >= 0).all() and np.isclose(raw["share"].sum(), 1.0)
    assert 0 < raw["in_lgb_train"].iloc[0] < 1


def test_multiclass_benchmark_quick_run_scores_every_method(tmp_path):
    bench = _script("multiclass")
    try:
        bench.load("shoppers_visitor")
    except bench.DataUnavailable as exc:
        pytest.skip(f"the shared data are absent: {exc}")
    means = bench.main(["--quick", "--data", "shoppers_visitor", "--out-dir", str(tmp_path)])
    methods = set(means["method"])
    assert {"base model", "Temperature", "Dirichlet (ODIR)", "MulticlassMCGrad", "binary MCGrad (one class)"} <= methods
    scored = means[means["method"] != "binary MCGrad (one class)"]
    assert scored["log_loss"].gt(0).all() and scored["worst_class_mce"].ge(0).all()
    assert (tmp_path / "multiclass.md").read_text().count("| shoppers_visitor | lightgbm |") == len(bench.OURS) + len(
        methods
    )


def test_mcgrad_stopping_rule_quick_mode_never_keeps_more_rounds_under_the_rule(tmp_path):
    module = _script("mcgrad_stopping_rule")
    assert module.main(["--quick", "--datasets", "synthetic", "--out-dir", str(tmp_path)]) == 0
    _, raw = _csv(tmp_path / "mcgrad_stopping_rule.csv")
    assert set(raw["data"]) == {"calibrated_2000", "synthetic_5000"}
    rounds = raw.pivot_table(index=["data", "seed"], columns="min_gain_se", values="rounds")
    assert (rounds[1.0] <= rounds[0.0]).all()  # with patience 0 the rule can only stop earlier
    assert np.isfinite(raw["mean_abs_change"]).all()
    assert "| calibrated_2000 | 1.00000 |" in (tmp_path / "mcgrad_stopping_rule.md").read_text()


def test_report_open_quick_mode_times_chromium_on_a_tiny_report():
    # benchmarks/report/report_open.py on a one-column report: its figures counted, the page's load event timed
    import shutil

    if not any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("chromium not found (apt-get install chromium)")
    m = _script("report_open").main(["--quick"])
    assert m["figures"] == 3 and m["bytes"] > 10_000
    assert 0 < m["dom_ms"][0] <= m["load_ms"][0] < 1000 * m["report_s"][0]


def test_calibrated_classifier_paired_differences_by_hand():
    # log losses of two methods on 2 datasets x 3 seeds: differences a - ref are (1, 2, 3) / 100 on "d1" (mean 0.02,
    # sd 0.01, SE 0.01 / sqrt(3)) and (-1, -1, -1) / 100 on "d2" (SE 0); over the datasets the mean of the means,
    # SE sqrt(SE1^2 + SE2^2) / 2
    module = _script("calibrated_classifier")
    rows = []
    for dataset, diffs in (("d1", (0.01, 0.02, 0.03)), ("d2", (-0.01, -0.01, -0.01))):
        for seed, d in enumerate(diffs):
            rows += [{"dataset": dataset, "seed": seed, "method": "base model", "log_loss": 0.5},
                     {"dataset": dataset, "seed": seed, "method": "ref", "log_loss": 0.3},
                     {"dataset": dataset, "seed": seed, "method": "a", "log_loss": 0.3 + d}]  # fmt: skip
    out = module.paired(pd.DataFrame(rows), "ref").set_index("dataset")
    assert out.loc["d1", "mean"] == pytest.approx(0.02) and out.loc["d1", "se"] == pytest.approx(0.01 / np.sqrt(3))
    assert out.loc["d2", "mean"] == pytest.approx(-0.01) and out.loc["d2", "se"] == pytest.approx(0.0, abs=1e-12)
    over = out.loc["mean over datasets"]
    assert over["mean"] == pytest.approx(0.005) and over["se"] == pytest.approx(0.01 / np.sqrt(3) / 2)
    # d1 is more than 2 SE above 0, d2 below it with SE 0, and their mean within 2 SE
    verdicts = list(module._verdict(out.reset_index()))
    assert over["n"] == 6 and verdicts == ["higher", "lower", "no clear difference"]


def test_mcgrad_tuning_benchmark_quick_mode_runs_mcal_and_says_why_the_reference_did_not(bench, tmp_path):
    # benchmarks/mcgrad/mcgrad_tuning_vs_reference.py --quick: 3,000 rows of Bank Marketing, 4 trials; the reference half
    # needs Ax (not a dependency) and runs only where this interpreter imports mcgrad.tuning
    _load(bench, "bank_marketing", max_rows=10)
    module = _script("mcgrad_tuning_vs_reference")
    assert module.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    header, raw = _csv(tmp_path / "mcgrad_tuning_vs_reference.csv")
    assert {"mcal version", "git commit", "seeds", "threads", "trials"} <= set(header)
    assert list(raw["method"]) == ["base model", *module.IMPLS]  # nothing left out silently
    ok = raw[raw["status"] == "ok"]
    assert np.isfinite(ok[["log_loss", "ece", "mce_sigma"]]).all().all()
    assert raw.loc[raw["status"] != "ok", "reason"].notna().all()
    tuned = raw[raw["method"] == "mcal tune_mcgrad"].iloc[0]
    # 1,800 training rows, 1,440 after the held-out fifth: too few for a rung below all of them (< 3 x 1,000),
    # so the 4 candidates are fitted once each, then the winner is refitted on all rows
    assert tuned["n_fits"] == 5 and tuned["n_train"] == 1800
    assert raw.loc[raw["method"] == "mcal defaults", "n_fits"].item() == 1
