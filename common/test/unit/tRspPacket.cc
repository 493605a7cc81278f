// tRspPacket: tests pending
