"""The one place ``X`` is read: column kinds, ``categorical_features``, the LightGBM feature encoder, segment
level codes, field vocabulary and slots."""
