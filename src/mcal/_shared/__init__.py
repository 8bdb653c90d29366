"""The building blocks that :mod:`mcal.metrics`, :mod:`mcal.plotting`, :mod:`mcal.report` and :mod:`mcal.dask` share,
private to mcal: the Brownian range behind every p-value of ECCE and MCE (``brownian``), the walks of partial sums
over segments and their successive differences (``walks``), the MCE's result and its making from per-segment
statistics (``mce``), the segments a metric reads (``segments``), and text (``text``).

It sits in its own import-linter layer, below :mod:`mcal.metrics` and above :mod:`mcal.segments`, so that no
package imports another's private module, and no helper is public only for that.
"""
