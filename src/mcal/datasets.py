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
