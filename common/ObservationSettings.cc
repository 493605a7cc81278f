// ObservationSettings: implementation pending
