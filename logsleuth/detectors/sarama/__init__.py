"""sarama's retry/re-dial stall (``stall``), in stages: the log read into failure chains
(``chain``), one incident read from its lines (``incident``), gaps attributed to waits (``waits``),
the incident's time budget (``budget``), the stall read with sarama's Logger off (``app_only``), the
measured timing model (``model``), the comparison with the model and the configuration
(``compare``), confidence and severity (``verdict``), the finding's wording (``text``), how settings
and seconds are shown (``format``), and ``--sarama-config`` (``config``)."""
