// tCrc64: tests pending
