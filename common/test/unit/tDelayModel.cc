// tDelayModel: tests pending
