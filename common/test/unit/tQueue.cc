// tQueue: tests pending
