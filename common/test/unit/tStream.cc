// tStream: tests pending
