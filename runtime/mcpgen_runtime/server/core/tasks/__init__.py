"""The tasks extension on the server (`io.modelcontextprotocol/tasks`): a tools/call answered with a
`CreateTaskResult` while its handler goes on, detached from the request, with its state in the store.

    records.py   TaskRecord: one task as the store keeps it, its keys and encoding
    ledger.py    TaskLedger: records read and written in the store (lease lapse, single-winner end)
    channel.py   TaskChannel: a running task's asks to the client, parked as inputRequests
    launch.py    Launch: one call that may become a task (the context's hooks, the decision)
    worker.py    TaskEngine: a call promoted to a task, its handler supervised (lease, TTL, cancel)
    methods.py   tasks/get, tasks/update and tasks/cancel
    watch.py     TaskWatch: notifications/tasks for the listen streams that list taskIds
    legacy.py    the 2025-11-25 experimental tasks of legacy sessions
"""
