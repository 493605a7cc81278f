// RspPacket: implementation pending
