"""Model files under faults: a save that fails or is killed part-way, leftover temporary files, syncing, and forged
files that would cost memory and time out of proportion to their size."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mcal
import mcal._persistence.atomic as atomic
from mcal._persistence.model_text import MIN_LEAF_BYTES, MIN_TREE_BYTES

P = np.random.default_rng(0).uniform(0.05, 0.95, 400)
F = pd.DataFrame({"f": np.array(["a", "b"])[np.arange(P.size) % 2]})
Y = (np.random.default_rng(1).uniform(size=P.size) < np.clip(P + np.where(F["f"] == "a", 0.1, -0.1), 0, 1)) * 1.0


@pytest.fixture(scope="module")
def two_networks():
    """Two different fitted network models (weights files of their own) and their predictions."""
    pytest.importorskip("torch").set_num_threads(1)
    pytest.importorskip("safetensors")
    models = [mcal.NeuCalib(field="f", max_iter=5 * k, random_state=0).fit(P, Y, X=F) for k in (1, 2)]
    return [(m, m.predict(P, X=F)) for m in models]


def _weights(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.safetensors"))


def _named_weights(path: Path) -> str:
    return json.loads(path.read_text())["weights"]["file"]


def test_network_weights_get_a_content_addressed_name_that_the_json_records(tmp_path, two_networks):
    (old, _), (new, _) = two_networks
    path = mcal.save(old, tmp_path / "m.json")
    first = _named_weights(path)
    assert first.startswith("m.") and first.endswith(".safetensors") and len(first) == len("m..safetensors") + 16
    mcal.save(new, path)
    assert _weights(tmp_path) == [_named_weights(path)] != [first]  # the replaced model's weights are removed
    mcal.save(new, path)  # the same content again: the same name, kept
    assert _weights(tmp_path) == [_named_weights(path)]


def test_a_save_failing_between_the_two_files_leaves_the_old_model_whole(tmp_path, two_networks, monkeypatch):
    (old, old_pred), (new, _) = two_networks
    path = mcal.save(old, tmp_path / "m.json")
    before = _weights(tmp_path)
    replace = os.replace

    def fail_on_the_json(src, dst):
        if str(dst).endswith(".json"):
            raise OSError("No space left on device")
        replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", fail_on_the_json)
    with pytest.raises(OSError, match="No space left"):
        mcal.save(new, path)
    monkeypatch.undo()
    assert _weights(tmp_path) == before  # the new weights are removed again, the old ones untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.json", *before])  # no temporary file either
    np.testing.assert_array_equal(mcal.load(path).predict(P, X=F), old_pred)


_KILLED_SAVE = """
import os, sys
import numpy as np, pandas as pd
import mcal, mcal._persistence.files as files
from pathlib import Path
P = np.random.default_rng(0).uniform(0.05, 0.95, 400)
F = pd.DataFrame({"f": np.array(["a", "b"])[np.arange(P.size) % 2]})
Y = (np.random.default_rng(1).uniform(size=P.size) < np.clip(P + np.where(F["f"] == "a", 0.1, -0.1), 0, 1)) * 1.0
model = mcal.NeuCalib(field="f", max_iter=10, random_state=0).fit(P, Y, X=F)
stage, write, unlink = sys.argv[2], files.atomic_write_bytes, Path.unlink
def killed_at_the_json(path, data):
    if str(path).endswith(".json"):
        os._exit(3)
    write(path, data)
def killed_at_the_cleanup(self, missing_ok=False):
    os._exit(3)
if stage == "json":
    files.atomic_write_bytes = killed_at_the_json
else:
    Path.unlink = killed_at_the_cleanup
mcal.save(model, sys.argv[1])
"""


@pytest.mark.parametrize("stage", ["json", "cleanup"])
@pytest.mark.slow
def test_a_save_killed_part_way_leaves_a_model_that_loads(tmp_path, two_networks, stage):
    # the process dies (no exception handler runs) before the JSON's rename, or after it, before the cleanup
    (old, old_pred), (new, new_pred) = two_networks
    path = mcal.save(old, tmp_path / "m.json")
    old_weights = _named_weights(path)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(path), stage], env=env, capture_output=True)
    assert run.returncode == 3, run.stderr.decode()[-2000:]
    assert len(_weights(tmp_path)) == 2  # both models' weights
    loaded = mcal.load(path)
    if stage == "json":
        assert _named_weights(path) == old_weights
        np.testing.assert_array_equal(loaded.predict(P, X=F), old_pred)
    else:
        assert _named_weights(path) != old_weights
        np.testing.assert_array_equal(loaded.predict(P, X=F), new_pred)  # the killed process fitted the same model
    mcal.save(new, path)  # the next save removes what the killed one left behind
    assert _weights(tmp_path) == [_named_weights(path)]
    np.testing.assert_array_equal(mcal.load(path).predict(P, X=F), new_pred)


def test_a_save_over_a_file_of_the_old_weights_name_removes_it(tmp_path, two_networks, rewrite_model):
    (old, _), (new, new_pred) = two_networks
    path = mcal.save(old, tmp_path / "m.json")
    (tmp_path / _named_weights(path)).rename(tmp_path / "m.safetensors")  # as mcal before content-addressed names
    rewrite_model(path, lambda doc: doc["weights"].update(file="m.safetensors"))
    mcal.load(path)
    mcal.save(new, path)
    assert _weights(tmp_path) == [_named_weights(path)]
    np.testing.assert_array_equal(mcal.load(path).predict(P, X=F), new_pred)


def test_a_non_network_model_saved_over_a_network_one_removes_its_weights(tmp_path, two_networks):
    mcal.save(two_networks[0][0], tmp_path / "m.json")
    mcal.save(mcal.PlattScaling().fit(P, Y), tmp_path / "m.json")
    assert _weights(tmp_path) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temporary_files_of_killed_writes_are_removed_by_the_next_write(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    leftovers = {
        f".m.json.mcal-{dead}-abc123.tmp": False,  # its process is gone: removed
        f".other.csv.mcal-{dead}-x.tmp": False,  # any destination in the folder
        f".m.json.mcal-{alive}-def456.tmp": True,  # a write in progress in a running process: kept
        f".old.json.mcal-{alive}-ghi.tmp": False,  # ... unless older than a day
        ".m.json.abc.tmp": True,  # not named as mcal names them: not mcal's
    }
    for name in leftovers:
        (tmp_path / name).write_bytes(b"partial")
    day_old = time.time() - atomic.STALE_SECONDS - 60
    os.utime(tmp_path / f".old.json.mcal-{alive}-ghi.tmp", (day_old, day_old))
    atomic.atomic_write_bytes(tmp_path / "report.html", b"<html>")
    kept = {p.name for p in tmp_path.iterdir()} - {"report.html"}
    assert kept == {name for name, keep in leftovers.items() if keep}


def test_data_is_synced_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    events = []
    fsync, replace = os.fsync, os.replace

    def record_fsync(fd):
        events.append(("fsync", "folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file"))
        fsync(fd)

    def record_replace(src, dst):
        events.append(("replace", Path(dst).name))
        replace(src, dst)

    monkeypatch.setattr(atomic.os, "fsync", record_fsync)
    monkeypatch.setattr(atomic.os, "replace", record_replace)
    atomic.atomic_write_bytes(tmp_path / "out.json", b"{}")
    if sys.platform.startswith("linux"):
        assert events == [("fsync", "file"), ("replace", "out.json"), ("fsync", "folder")]
    assert (tmp_path / "out.json").read_bytes() == b"{}"


def test_a_failed_write_leaves_no_temporary_file_and_the_old_content(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_bytes(b"old")

    def fail(fd):
        raise OSError("I/O error")

    monkeypatch.setattr(atomic.os, "fsync", fail)
    with pytest.raises(OSError, match="I/O error"):
        atomic.atomic_write_bytes(target, b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"] and target.read_bytes() == b"old"


# -- forged files ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcgrad_file(tmp_path_factory):
    pytest.importorskip("lightgbm")
    path = tmp_path_factory.mktemp("forged") / "m.json"
    mcal.save(mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=1).fit(P, Y), path)
    return path


def _with_trees(text: str, tree: str, n: int) -> str:
    """``text`` (LightGBM model text) with its trees replaced by ``n`` copies of ``tree`` (the lines after Tree=i)."""
    head = [line for line in text.partition("\nTree=0\n")[0].split("\n") if not line.startswith("tree_sizes=")]
    sizes = " ".join(str(len(f"Tree={i}\n{tree}")) for i in range(n))
    trees = "".join(f"Tree={i}\n{tree}" for i in range(n))
    return "\n".join(head) + f"\ntree_sizes={sizes}\n\n{trees}end of trees\n"


#: A one-leaf tree as LightGBM 4 writes it (with a leaf value of 0): 222 bytes with its Tree= line.
ONE_LEAF = (
    "num_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\ndecision_type=\nleft_child=\nright_child=\n"
    "leaf_value=0\nleaf_weight=\nleaf_count=1\ninternal_value=\ninternal_weight=\ninternal_count=\nis_linear=0\n"
    "shrinkage=1\n\n\n"
)


def _forge(tmp_path, mcgrad_file, rewrite_model, tree, n):
    path = tmp_path / "forged.json"
    path.write_bytes(mcgrad_file.read_bytes())
    rewrite_model(path, lambda doc: doc["model"]["state"]["boosters"].__setitem__(0, _with_trees(
        doc["model"]["state"]["boosters"][0], tree, n)))  # fmt: skip
    return path


def test_lightgbm_writes_at_least_the_bytes_per_tree_and_leaf_the_check_asks():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 2)), (rng.uniform(size=300) < 0.5) * 1.0
    for params in ({"min_data_in_leaf": 1000}, {"num_leaves": 64, "min_data_in_leaf": 1}):  # one leaf; many leaves
        booster = lgb.train({"objective": "cross_entropy", "verbose": -1, **params}, lgb.Dataset(X, y), 3)
        text = booster.model_to_string()
        trees = text[text.index("\nTree=0\n") + 1 : text.index("end of trees")].split("\n\n\n")[:-1]
        for tree in trees:
            n_leaves = int(tree.split("num_leaves=")[1].split("\n")[0])
            assert len(tree) + 3 >= max(MIN_TREE_BYTES, n_leaves * MIN_LEAF_BYTES)
    assert len("Tree=0\n" + ONE_LEAF) == 222


def test_a_file_with_more_trees_per_byte_than_lightgbm_writes_is_refused(tmp_path, mcgrad_file, rewrite_model):
    path = _forge(
        tmp_path, mcgrad_file, rewrite_model, "num_leaves=1\nnum_cat=0\nleaf_value=0\nshrinkage=1\n\n\n", 3000
    )
    with pytest.raises(ValueError, match=r"boosters\[0\] must be LightGBM model text, which writes at least 200 "
                                         r"bytes per tree; got 3000 trees in \d+ bytes"):  # fmt: skip
        mcal.load(path)


def test_a_file_with_more_leaves_per_byte_than_lightgbm_writes_is_refused(tmp_path, mcgrad_file, rewrite_model):
    path = _forge(tmp_path, mcgrad_file, rewrite_model, ONE_LEAF.replace("num_leaves=1", "num_leaves=9000000"), 2)
    with pytest.raises(ValueError, match=r"at least 20 bytes per leaf; got 18000000 leaves in \d+ bytes"):
        mcal.load(path)


def test_a_file_as_dense_as_lightgbm_writes_loads(tmp_path, mcgrad_file, rewrite_model):
    path = _forge(tmp_path, mcgrad_file, rewrite_model, ONE_LEAF, 3000)
    assert mcal.load(path).predict(P).shape == P.shape


def test_a_forged_array_shape_of_2_to_the_64_is_a_value_error(tmp_path, rewrite_model):
    path = mcal.save(mcal.IsotonicCalibration().fit(P, Y), tmp_path / "m.json")
    rewrite_model(path, lambda doc: doc["model"]["state"]["y_thresholds_"].update(shape=[2**64]))
    with pytest.raises(ValueError, match=r"must hold 18446744073709551616 values matching shape"):
        mcal.load(path)


def test_weights_not_contiguous_in_memory_are_written_in_their_logical_order(tmp_path, two_networks, monkeypatch):
    # safetensors writes an array's buffer as it lies in memory: a Fortran-ordered 2-D tensor would come back
    # transposed in place (the same shape, scrambled values) unless the save makes it contiguous first
    (model, pred), _ = two_networks
    tensors = model._get_tensors()
    assert any(v.ndim == 2 and min(v.shape) > 1 for v in tensors.values())  # a tensor the bug would scramble
    fortran = {k: v.T.copy().T for k, v in tensors.items()}  # the same values, in column-major memory order
    monkeypatch.setattr(type(model), "_get_tensors", lambda self: fortran)
    loaded = mcal.load(mcal.save(model, tmp_path / "m.json"))
    monkeypatch.undo()
    for name, arr in loaded._get_tensors().items():
        np.testing.assert_array_equal(arr, tensors[name], err_msg=name)
    np.testing.assert_array_equal(loaded.predict(P, X=F), pred)
