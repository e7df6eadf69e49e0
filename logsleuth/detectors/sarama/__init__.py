"""sarama's retry/re-dial stall (``stall``), in stages: the log read into failure chains
(``chain``), one incident read from its lines (``incident``), gaps attributed to waits (``waits``),
the incident's time budget (``budget``), the stall read with sarama's Logger off (``app_only``), the
measured timing model (``model``), the comparison with the model and the configuration
(``compare``), the finding's facts (``stallfacts``) graded and worded by
``sarama.retry-redial-stall.toml``, how settings, seconds and the budget are shown (``format``: the
words' filters), and ``--sarama-config`` (``config``)."""
