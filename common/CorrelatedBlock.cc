// CorrelatedBlock: implementation pending
