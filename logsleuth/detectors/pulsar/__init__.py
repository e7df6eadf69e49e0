"""Pulsar's diagnoses: the dangling producer future after a bundle unload (``dangling``, with the
client-log view in ``client_only``) and the load shedding behind unloads (``shedding``)."""
