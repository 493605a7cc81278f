// Logger: implementation pending
