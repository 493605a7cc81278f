// SampleTime: implementation pending
