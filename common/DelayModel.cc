// DelayModel: implementation pending
