// StationBlock: implementation pending
