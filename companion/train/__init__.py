"""Training the piece classifiers (``companion train``). torch is imported only inside
``companion.train.model``/``fit``; the data helpers here run without it."""
