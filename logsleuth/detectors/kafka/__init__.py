"""The Kafka Java producer's diagnoses. ``model`` is the one incident model (outage episodes,
expired batches, buffer runs, metadata waits, loss) that ``outage``, ``delivery``, ``buffer`` and
``callback`` read, and ``text`` is the wording and evidence they share."""
