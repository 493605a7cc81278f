// tObservationSettings: tests pending
