// Crc64: implementation pending
