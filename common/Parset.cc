// Parset: implementation pending
