-- Run once by the postgres image's entrypoint on a fresh data directory
-- (https://hub.docker.com/_/postgres, "Initialization scripts"), connected to
-- POSTGRES_DB. Native mode does the same per database (scripts/lib/postgres.sh).
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
\connect template1
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
