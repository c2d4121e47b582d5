"""The authority's routes, one module per area, each an ``APIRouter`` built over the server's ``Kit``:

    admin      health, whoami (the caller's user, roles, scopes, the policy)
    drafts     planning and reading: plan, replan, drafts, pending, show, diff, log, export, report
    requests   open requests (a request that needs clarification): show, answer, expire
    decisions  approve, reject, expire, cancel (each wakes the Prefect run waiting on the version)
    vehicle    dispatch, pause, resume, recall, monitor, reconcile (at the server's link record)
    fleet      the fleet as its vehicles report it (the hub's live state) or as the file says
    ledger     backup (an admin's)
    events     the live feed (Server-Sent Events)
    ops        the live operations page (/ops): its map, flights and live stream
"""
