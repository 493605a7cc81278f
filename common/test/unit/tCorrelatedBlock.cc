// tCorrelatedBlock: tests pending
