"""A campaign call over a real transport, row-compatible with the simulated one.

``caller`` (:class:`~rig.calls.run.caller.TransportCaller`, the runner's ``call_fn``),
``place`` (placing one call), ``score`` (choosing its score), ``stages`` (the stages that read
what the call returned), ``call_row`` (its transport columns and recording), ``options`` (the
options of ``rig campaign run --transport``, checked before any model loads).
"""
