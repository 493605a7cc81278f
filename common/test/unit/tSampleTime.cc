// tSampleTime: tests pending
