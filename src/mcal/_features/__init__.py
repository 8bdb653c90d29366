"""The one place ``X`` is read: tables of any kind narwhals reads and their column kinds (``table``),
``categorical_features`` (``categorical``), the LightGBM feature encoder (``encoder``), segment level codes
(``segment_codes``), and field vocabulary, slots and the columns field-aware models read (``fields``,
``field_slots``, ``field_inputs``)."""
