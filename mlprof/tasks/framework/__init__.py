"""The task framework (columnflow's ``tasks/framework``): the base task, the parameter types and
the concern mixins, the measuring workflows' base, the remote workflows, and the hooks that
``law run`` and the ``mlprof`` command install (one-line errors, the end-of-run summary, law's
scale patches, the up-front checks); the concrete tasks live in :mod:`mlprof.tasks`.

Importing this package imports none of its modules (the start-up cost of ``law run`` counts).
"""
