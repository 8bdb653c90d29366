"""Checks of the LightGBM parameters that MCGrad passes on (``lightgbm_params``), before LightGBM sees them.

LightGBM prints ``[LightGBM] [Fatal] ...`` to the process's standard error for every parameter value it rejects,
before raising the error that mcal turns into a ``ValueError`` (:func:`lightgbm_errors_name_lightgbm_params`);
its log callback (``lightgbm.register_logger``) does not take those lines, and silencing the stream would
silence the whole process. So every training parameter is checked here first, by LightGBM 4.7's own rules
(``src/io/config_auto.cpp`` and the checks of the boosting and tree code): its type (an integer, a number, a
bool or one of a few words), its range, its length where it holds a value per feature, and the few rules
between parameters. Names that MCGrad sets itself, or that are not about training, are refused with the reason.
What still reaches LightGBM's own checks (a GPU device that the build lacks) raises as before.
"""

from __future__ import annotations

import difflib
import functools
import math
import numbers
import re
import sys
from typing import Any

import numpy as np

from mcal._lightgbm_checks import INT32_MAX
from mcal._optional import import_optional

_MONOTONE = ("monotone_constraints", "mc", "monotone_constraint", "monotonic_cst")

# LightGBM parameters that MCGrad sets itself, with their LightGBM aliases, and the MCGrad argument to use.
MCGRAD_RESERVED = {
    "n_jobs": ("num_threads", "num_thread", "nthread", "nthreads", "n_jobs"),
    "random_state": (
        "seed",
        "random_seed",
        "random_state",
        "bagging_seed",
        "feature_fraction_seed",
        "data_random_seed",
        "extra_seed",
        "drop_seed",
        "objective_seed",
    ),
    "n_estimators": (
        "num_iterations",
        "num_iteration",
        "n_iter",
        "num_tree",
        "num_trees",
        "num_round",
        "num_rounds",
        "nrounds",
        "num_boost_round",
        "n_estimators",
        "max_iter",
    ),
    "learning_rate": ("learning_rate", "shrinkage_rate", "eta"),
    "max_depth": ("max_depth",),
    "min_child_samples": ("min_data_in_leaf", "min_data_per_leaf", "min_data", "min_child_samples", "min_samples_leaf"),
    "max_leaves": ("num_leaves", "num_leaf", "max_leaves", "max_leaf", "max_leaf_nodes"),
    "l2_regularization": ("lambda_l2", "reg_lambda", "lambda", "l2_regularization"),
    "min_gain_to_split": ("min_gain_to_split", "min_split_gain"),
    "min_sum_hessian_in_leaf": (
        "min_sum_hessian_in_leaf",
        "min_sum_hessian_per_leaf",
        "min_sum_hessian",
        "min_hessian",
        "min_child_weight",
    ),
    "categorical_features": (
        "categorical_feature",
        "cat_feature",
        "categorical_column",
        "cat_column",
        "categorical_features",
    ),
    "early_stopping": ("early_stopping_round", "early_stopping_rounds", "early_stopping", "n_iter_no_change"),
    "(fixed)": (
        "objective",
        "objective_type",
        "app",
        "application",
        "loss",
        "boosting",
        "boosting_type",
        "boost",
        "num_class",
        "num_classes",
        "deterministic",
        "force_col_wise",
        "force_row_wise",
        "verbosity",
        "verbose",
        "init_score",
    ),
    # one value per column of a single binned Dataset; the score column is binned apart from the features
    "(unsupported)": ("max_bin_by_feature",),
    # parameters of LightGBM's binary objective, which the cross-entropy objective silently ignores
    "(ignored)": (
        "is_unbalance",
        "unbalance",
        "unbalanced_sets",
        "scale_pos_weight",
        "sigmoid",
        "boost_from_average",
        "pos_bagging_fraction",
        "pos_sub_row",
        "pos_subsample",
        "pos_bagging",
        "neg_bagging_fraction",
        "neg_sub_row",
        "neg_subsample",
        "neg_bagging",
    ),
}


@functools.cache
def _reserved_names() -> dict[str, str]:
    """Every name in :data:`MCGRAD_RESERVED` with all its LightGBM aliases, mapped to the argument (or reason)."""
    return {alias: arg for arg, names in MCGRAD_RESERVED.items() for alias in with_aliases(names)}


#: LightGBM parameters that are not about training (files, tasks, prediction, evaluation, the network), whose
#: names LightGBM knows but whose values a training call ignores or reads from disk.
_NOT_TRAINING = (
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
)


@functools.cache
def _not_training_names() -> frozenset[str]:
    """:data:`_NOT_TRAINING` with all its LightGBM aliases."""
    return with_aliases(_NOT_TRAINING)


#: Characters that would end a value in LightGBM's "key=value key=value" parameter string.
_PARAM_STRING_BREAKS = re.compile(r"[\s=]")


def check_lightgbm_param(key: Any, value: Any) -> Any:
    """Check one entry of a user's ``lightgbm_params`` for MCGrad before LightGBM sees it, and return its value as
    LightGBM reads it (as :func:`_value` gives it).

    The names in :data:`MCGRAD_RESERVED` (with every LightGBM alias, see :func:`with_aliases`) are refused with
    the argument to use instead, or the reason.

    Raises
    ------
    TypeError
        If the key is not a string, or the value is not a bool, number or string, a list (tuple or 1-D numpy
        array) of them, or a list of such lists (``interaction_constraints``).
    ValueError
        If LightGBM does not know the name (it would ignore it silently), MCGrad sets it, it is not a training
        parameter, a number is not finite, an integer does not fit LightGBM's int32 (where LightGBM reads an
        integer; it reads a real-valued parameter as a double), a string holds whitespace or ``=`` (which would
        end the value in LightGBM's parameter string and start another), or the value is not of its parameter's
        kind (an integer, a number, True or False, one of a few words, a list of numbers) or lies outside its
        range, by LightGBM's rules.
    """
    if not isinstance(key, str):
        raise TypeError(f"lightgbm_params keys must be strings; got {key!r}")
    known = _alias_groups()
    if known and key not in known:
        close = difflib.get_close_matches(key, known, n=3)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        raise ValueError(
            f"lightgbm_params must hold LightGBM parameters; got {key!r}, which LightGBM does not "
            f"know and would ignore{hint}"
        )
    reserved = _reserved_names()
    if key in reserved:
        raise ValueError(
            f"lightgbm_params must not set {key!r}, "
            + _RESERVED_WHY.get(reserved[key], f"which MCGrad controls; use the argument {reserved[key]}=")
        )
    if key in _not_training_names():
        raise ValueError(
            f"lightgbm_params must hold training parameters; got {key!r}, a LightGBM parameter of "
            "files, tasks, prediction, evaluation or the network, which MCGrad does not pass on (it "
            "reads no files for LightGBM)"
        )
    items = _items(value)
    flat = [v for item in items for v in (item if isinstance(item, list) else [item])]
    if not all(isinstance(v, (bool, np.bool_, numbers.Real, str)) for v in flat):
        raise TypeError(
            f"lightgbm_params[{key!r}] must be a bool, number or string, a list (tuple or 1-D numpy "
            f"array) of them, or a list of such lists; got {value!r:.80}"
        )
    real = _canonical(key) in _REAL_VALUED  # LightGBM reads an integer beyond int32 as a double there
    for v in flat:
        integer = isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
        if integer and not real and not -INT32_MAX - 1 <= v <= INT32_MAX:
            raise ValueError(f"lightgbm_params[{key!r}] must fit LightGBM's int32; got {v}")
        if isinstance(v, numbers.Real) and not (abs(int(v)) <= sys.float_info.max if integer else math.isfinite(v)):
            raise ValueError(f"lightgbm_params[{key!r}] must hold finite numbers; got {str(v)[:40]}")
        if isinstance(v, str) and _PARAM_STRING_BREAKS.search(v):
            raise ValueError(f"lightgbm_params[{key!r}] must be a string without whitespace or '='; got {v!r:.80}")
    return _value(key, value)


_RESERVED_WHY = {
    "(fixed)": "which MCGrad controls; it cannot be changed",
    "(ignored)": "which LightGBM ignores under MCGrad's cross-entropy objective (the initial score is the "
    "input's logit; weigh classes with sample_weight)",
    "(unsupported)": "which MCGrad cannot pass on: it bins the score column apart from the features (use max_bin)",
}


def _items(value: Any) -> list[Any]:
    """The items of a list, tuple or 1-D numpy array, which LightGBM joins with commas (``[value]`` for a single
    value; a list inside a list stays one item, as ``interaction_constraints`` holds them)."""
    return list(value) if _is_sequence(value) else [value]


def _is_sequence(value: Any) -> bool:
    """Whether LightGBM reads ``value`` as a list (:func:`_items`)."""
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def with_aliases(names: Any) -> frozenset[str]:
    """``names`` with every alias LightGBM knows for each (LightGBM's own table), and the names themselves."""
    groups = _alias_groups()
    return frozenset(alias for name in names for alias in groups.get(name, (name,)))


@functools.cache
def _alias_groups() -> dict[str, frozenset[str]]:
    """Every LightGBM parameter name and alias, mapped to its group (the name and all its aliases); empty where
    a LightGBM release lacks the table (``LGBM_DumpParamAliases``, read through ``lightgbm.basic._ConfigAliases``),
    and the names then pass unchecked."""
    lgb = import_optional("lightgbm")
    table = getattr(getattr(lgb.basic, "_ConfigAliases", None), "_get_all_param_aliases", None)
    if table is None:
        return {}
    groups = [frozenset((key, *aliases)) for key, aliases in table().items()]
    return {name: group for group in groups for name in group}


#: The rules of LightGBM 4.7 on the values of the training parameters that MCGrad passes on: a range in words
#: (checked by :data:`_RULES`; "" for any value) for integers and numbers, the accepted words (in any case) for
#: choices; bools take True, False or LightGBM's words for them.
_INTEGERS = {
    "bagging_freq": "",
    "bin_construct_sample_cnt": "> 0",
    "gpu_device_id": "",
    "gpu_platform_id": "",
    "lambdarank_truncation_level": "> 0",
    "max_bin": "> 1",
    "max_cat_threshold": "> 0",
    "max_cat_to_onehot": "> 0",
    "max_drop": "",
    "min_data_in_bin": "> 0",
    "min_data_per_group": "> 0",
    "num_gpu": "> 0",
    "num_grad_quant_bins": "",
    "top_k": "> 0",
}
_NUMBERS = {
    "alpha": "> 0",
    "bagging_fraction": "in (0, 1]",
    "cat_l2": ">= 0",
    "cat_smooth": ">= 0",
    "cegb_penalty_split": ">= 0",
    "cegb_tradeoff": ">= 0",
    "drop_rate": "in [0, 1]",
    "early_stopping_min_delta": ">= 0",
    "fair_c": "> 0",
    "feature_fraction": "in (0, 1]",
    "feature_fraction_bynode": "in (0, 1]",
    "histogram_pool_size": "",
    "lambda_l1": ">= 0",
    "lambdarank_position_bias_regularization": ">= 0",
    "linear_lambda": ">= 0",
    "max_delta_step": "",
    "monotone_penalty": ">= 0",
    "other_rate": "in [0, 1]",
    "path_smooth": ">= 0",
    "poisson_max_delta_step": "> 0",
    "refit_decay_rate": "in [0, 1]",
    "skip_drop": "in [0, 1]",
    "top_rate": "in [0, 1]",
    "tweedie_variance_power": "in [1, 2)",
}
_BOOLS = frozenset(
    {
        "bagging_by_query",
        "enable_bundle",
        "extra_trees",
        "feature_pre_filter",
        "first_metric_only",
        "gpu_use_dp",
        "is_enable_sparse",
        "lambdarank_norm",
        "linear_tree",
        "pre_partition",
        "quant_train_renew_leaf",
        "reg_sqrt",
        "stochastic_rounding",
        "uniform_drop",
        "use_missing",
        "use_quantized_grad",
        "xgboost_dart_mode",
        "zero_as_missing",
    }
)
_CHOICES = {
    "tree_learner": ("serial", "feature", "data", "voting", "feature_parallel", "data_parallel", "voting_parallel"),
    "device_type": ("cpu", "gpu", "cuda"),
    "data_sample_strategy": ("bagging", "goss"),
    "monotone_constraints_method": ("basic", "intermediate", "advanced"),  # LightGBM took any other as basic
}
#: One number per LightGBM feature (the columns of X, then the score), checked once the columns are known.
_PER_FEATURE = ("feature_contri", "cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled")
#: Lists of numbers of any length, and free text, that LightGBM parses itself.
_NUMBER_LISTS = frozenset({"label_gain"})
#: Free text that LightGBM parses itself (lists of feature indices, device numbers).
_TEXTS = frozenset({"interaction_constraints", "gpu_device_id_list"})
_RULES = {
    "": lambda v: True,
    "> 0": lambda v: v > 0,
    ">= 0": lambda v: v >= 0,
    "> 1": lambda v: v > 1,
    "in (0, 1]": lambda v: 0 < v <= 1,
    "in [0, 1]": lambda v: 0 <= v <= 1,
    "in [1, 2)": lambda v: 1 <= v < 2,
}
_TRUE, _FALSE = ("true", "+"), ("false", "-")  # LightGBM's words for a bool, in any case
_RULED = frozenset((*_INTEGERS, *_NUMBERS, *_BOOLS, *_CHOICES, *_PER_FEATURE, *_NUMBER_LISTS))
#: The parameters that LightGBM reads as doubles.
_REAL_VALUED = frozenset((*_NUMBERS, *_PER_FEATURE, *_NUMBER_LISTS))


def _canonical(key: str) -> str:
    """LightGBM's own name of the parameter ``key`` (one of its aliases, or itself) where a rule here has it."""
    return next(iter(_RULED & _alias_groups().get(key, frozenset((key,)))), key)


def _value(key: str, value: Any) -> Any:
    """The value of one entry as LightGBM reads it (a bool, an int, a float, a lowercase word, a list of floats),
    checked against :data:`_INTEGERS` and the other rules of its parameter.

    Raises
    ------
    ValueError
        If the value is not of its parameter's kind or outside its range.
    """
    name, label = _canonical(key), f"lightgbm_params[{key!r}]"
    if name not in _RULED:  # free text, monotone constraints (checked with the columns), or a newer LightGBM's
        return value
    if name in _PER_FEATURE or name in _NUMBER_LISTS:
        items = value.split(",") if isinstance(value, str) else _items(value)
        numbers_ = [_number(v) for v in items]
        if any(v is None for v in numbers_):
            raise ValueError(f"{label} must be a list of numbers; got {value!r:.80}")
        return numbers_
    if _is_sequence(value):
        raise ValueError(f"{label} must be a single value, not a list; got {value!r:.80}")
    if name in _BOOLS:
        word = str(value).lower() if isinstance(value, str) else None
        if isinstance(value, (bool, np.bool_)) or word in _TRUE + _FALSE:
            return bool(value) if word is None else word in _TRUE
        raise ValueError(f"{label} must be True or False; got {value!r}")
    if name in _CHOICES:
        if not isinstance(value, str) or value.lower() not in _CHOICES[name]:
            raise ValueError(f"{label} must be one of {list(_CHOICES[name])}; got {value!r}")
        return value.lower()
    rule = _INTEGERS.get(name, _NUMBERS.get(name))
    number = _integer(value) if name in _INTEGERS else _number(value)
    if number is None or not _RULES[rule](number):
        kind = "an integer" if name in _INTEGERS else "a number"
        raise ValueError(f"{label} must be {kind}{' ' + rule if rule else ''}; got {value!r}")
    return number


def _integer(value: Any) -> int | None:
    """An int from an int (not a bool) or its text, as LightGBM reads an integer parameter; else None."""
    if isinstance(value, str) and re.fullmatch(r"[-+]?\d+", value.strip()):
        return int(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    return None


def _number(value: Any) -> float | None:
    """A finite float from a number (not a bool) or its text, as LightGBM reads a real parameter; else None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def check_lightgbm_params(params: dict[str, Any]) -> None:
    """Check a user's ``lightgbm_params`` for MCGrad before LightGBM sees them: each entry
    (:func:`check_lightgbm_param`), each parameter set once, and LightGBM's rules between parameters.

    Raises
    ------
    TypeError
        As :func:`check_lightgbm_param`.
    ValueError
        As :func:`check_lightgbm_param`; if two aliases of one parameter are given; or if GOSS sampling
        (``data_sample_strategy="goss"``) is combined with bagging or with ``top_rate + other_rate > 1``, or
        linear trees with ``zero_as_missing``.
    """
    read = {key: check_lightgbm_param(key, value) for key, value in params.items()}
    names: dict[str, str] = {}
    for key in params:
        name = _canonical(key)
        if name in names:
            raise ValueError(f"lightgbm_params must set each LightGBM parameter once; got {names[name]!r} "
                             f"and {key!r}, two names of {name!r}")  # fmt: skip
        names[name] = key
    value = {name: read[key] for name, key in names.items()}
    if value.get("data_sample_strategy") == "goss":
        bagging = value.get("bagging_freq", 0) > 0 and value.get("bagging_fraction", 1.0) != 1.0
        if bagging:
            raise ValueError(
                "lightgbm_params must not combine data_sample_strategy='goss' with bagging "
                "(bagging_freq > 0 and bagging_fraction < 1), which LightGBM refuses; got "
                f"{ {names[n]: params[names[n]] for n in ('bagging_freq', 'bagging_fraction')} }"
            )
        rates = value.get("top_rate", 0.2), value.get("other_rate", 0.1)  # LightGBM's defaults
        if sum(rates) > 1.0:
            raise ValueError(f"lightgbm_params must have top_rate + other_rate <= 1 with data_sample_strategy='goss'; "
                             f"got top_rate={rates[0]} and other_rate={rates[1]}")  # fmt: skip
    if value.get("linear_tree") and value.get("zero_as_missing"):
        raise ValueError("lightgbm_params must not combine linear_tree=True with zero_as_missing=True, which LightGBM "
                         "refuses")  # fmt: skip


def check_per_feature_params(lightgbm_params: dict[str, Any] | None, encoder: Any) -> None:
    """Raise ValueError unless the parameters that hold one value per LightGBM feature (the encoded columns of
    ``X``, then the score) hold that many: monotone constraints, one sign each, 0 on categorical columns
    (LightGBM 4.7 aborts the process on a constraint on a categorical column), and the numbers of
    ``feature_contri`` and the ``cegb_penalty_feature_*`` penalties (LightGBM's error printed first)."""
    extra = lightgbm_params or {}
    d = encoder.n_features_in_
    for key in [k for k in _MONOTONE if k in extra]:
        value = extra[key]
        items = value.split(",") if isinstance(value, str) else _items(value)
        signs = [_sign(v) for v in items]
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
    for key in [k for k in extra if _canonical(k) in _PER_FEATURE]:
        if len(_value(key, extra[key])) != d + 1:
            raise ValueError(f"lightgbm_params[{key!r}] must hold {d + 1} numbers, one per column of X and then one "
                             f"for the score; got {extra[key]!r:.80}")  # fmt: skip


def _sign(value: Any) -> str:
    """A monotone constraint as LightGBM reads it: ``"1"`` for 1 and 1.0 alike (its text ``"1.0"`` reads as 1), the
    text of anything else (``"True"``, which LightGBM would read as 0, and ``"0.9"`` are then refused)."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and value in (-1, 0, 1):
        return str(int(value))
    return str(value).strip()


def lightgbm_errors_name_lightgbm_params(method: Any) -> Any:
    """Decorate an estimator's fitting method: a ``LightGBMError`` raised while its ``lightgbm_params`` are set
    becomes a ``ValueError`` that names them (LightGBM checks parameters, and their fit to the data, only when
    it trains)."""

    @functools.wraps(method)
    def fit_with(self: Any, *args: Any, **kwargs: Any) -> Any:
        lgb = import_optional("lightgbm")
        try:
            return method(self, *args, **kwargs)
        except lgb.basic.LightGBMError as exc:
            if not self.lightgbm_params:
                raise
            raise ValueError(
                f"lightgbm_params must be parameters that LightGBM accepts for these data; got "
                f"{self.lightgbm_params!r}, which LightGBM rejected: {str(exc).strip()}"
            ) from exc

    return fit_with
