// Stream: implementation pending
