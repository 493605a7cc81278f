// StationTable: implementation pending
