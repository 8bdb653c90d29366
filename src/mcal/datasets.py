"""Loaders for the data shipped inside mcal (the demo's default input)."""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

#: Categorical columns of Bank Marketing.
BANK_CATEGORICAL = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]
#: Numerical columns of Bank Marketing (``day`` is dropped, as in the MCGrad paper's protocol).
BANK_NUMERICAL = ["age", "balance", "duration", "campaign", "pdays", "previous"]


def load_bank_marketing() -> pd.DataFrame:
    """Load UCI Bank Marketing (``bank-full``), shipped with mcal under CC BY 4.0.

    Returns
    -------
    data : DataFrame of shape (45211, 17)
        The original columns; ``y`` is converted to int 0/1 (1 = "yes", 11.70 % of rows); categorical columns
        are pandas ``category`` dtype.

    References
    ----------
    .. [1] Moro, Cortez, Rita, "A data-driven approach to predict the success of bank telemarketing",
       Decision Support Systems 62:22-31, 2014. UCI DOI 10.24432/C5K306.

    Examples
    --------
    >>> df = load_bank_marketing()
    >>> df.shape, int(df["y"].sum())
    ((45211, 17), 5289)
    """
    with files("mcal.data").joinpath("bank-full.csv.gz").open("rb") as fh:
        df = pd.read_csv(fh, sep=";", compression="gzip")
    df["y"] = (df["y"] == "yes").astype(int)
    for col in BANK_CATEGORICAL:
        df[col] = df[col].astype("category")
    return df


#: The prespecified groups of Bank Marketing in the MCGrad paper's benchmark (after Hansen et al. 2024):
#: name -> (column, values); ``age`` is first rounded to the nearest multiple of 5.
_BANK_GROUPS: dict[str, tuple[str, tuple]] = {
    **{f"job={v}": ("job", (v,)) for v in ("management", "technician", "entrepreneur", "blue-collar", "retired")},
    **{f"marital={v}": ("marital", (v,)) for v in ("married", "single")},
    **{f"education={v}": ("education", (v,)) for v in ("primary", "secondary", "tertiary")},
    **{f"housing={v}": ("housing", (v,)) for v in ("yes", "no")},
    "age<30": ("age5", tuple(range(0, 30, 5))),
    "30<=age<40": ("age5", (30, 35)),
    "age>=50": ("age5", tuple(range(50, 200, 5))),
}


def bank_marketing_groups(data: pd.DataFrame) -> pd.DataFrame:
    """The 15 prespecified groups of Bank Marketing, as boolean indicator columns.

    Parameters
    ----------
    data : DataFrame of shape (n_samples, n_columns)
        Rows of :func:`load_bank_marketing` (any subset); needs ``job``, ``marital``, ``education``,
        ``housing`` and ``age``.

    Returns
    -------
    groups : DataFrame of shape (len(data), 15), bool
        One column per group, named like ``job=management`` or ``30<=age<40``; the age groups use the age
        rounded to the nearest multiple of 5 (so ``age<30`` is raw age <= 27 and ``age>=50`` raw age >= 48).

    Raises
    ------
    TypeError
        If ``data`` is not a DataFrame.
    ValueError
        If a needed column is missing.

    Notes
    -----
    The groups of the MCGrad paper's benchmark (Tax et al., arXiv:2509.19884, section 4.1 and Appendix C),
    which are Hansen et al.'s (2024) ``BankMarketing`` default groups; all 15 hold more than 0.5 % of the rows.
    This is how HKRR and DFMC, which need prespecified groups, are given them in ``mcal demo``.

    Examples
    --------
    >>> groups = bank_marketing_groups(load_bank_marketing())
    >>> groups.shape, int(groups["job=management"].sum()), int(groups["age>=50"].sum())
    ((45211, 15), 9458, 12185)
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a DataFrame of Bank Marketing rows; got {type(data).__name__}")
    needed = ["job", "marital", "education", "housing", "age"]
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise ValueError(f"data must hold the columns {needed}; got a frame missing {missing}")
    age5 = (data["age"].to_numpy() / 5.0).round() * 5
    columns = {}
    for name, (column, values) in _BANK_GROUPS.items():
        source = age5 if column == "age5" else data[column].astype(str).to_numpy()
        columns[name] = pd.Series(source, index=data.index).isin(values).to_numpy()
    return pd.DataFrame(columns, index=data.index)
