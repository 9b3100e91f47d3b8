-- The asyncjob store's database (the worker's ASYNCJOB_STORE), created once when PostgreSQL initialises its data
-- volume. Temporal's own databases are created by the temporal-schema service (docker/temporal/setup-schema.sh).
CREATE DATABASE asyncjob;
