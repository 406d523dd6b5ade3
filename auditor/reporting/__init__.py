"""Reporting: the AuditReport and its files (`report`, `html`), the exact curve drawn beside an audit
(`exact`), and progress with its interruption message (`progress`)."""
