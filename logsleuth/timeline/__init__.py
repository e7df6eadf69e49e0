"""Timeline: all inputs on one clock.

In: the events table. Out: the same table with rotated segments read as one log, broker
connections linked to the client logs that made them (``links``), clients' clock skew estimated
and corrected (``skew``), all through ``merge.correlate``; and bucketed histograms of event rates
with the causes marked (``histogram``).
"""
