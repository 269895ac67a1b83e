/// The receiver's database: tables, two roles and what each may do (README.md, "Roles"). Run once by the
/// database owner (`sanad credit receiver setup --db ADMIN-CONNINFO`); every statement is idempotent.
///
/// - `sanad_device` (what devices connect as) may only EXECUTE `credit_submit(text)`, which stages a document, and
///   `credit_submission(uuid)`, which reads the outcome of the submission that ticket names. It has no privilege on
///   any table: it cannot write verified rows, read records, delete the rejection log or register keys.
/// - `sanad_receiver` (the `serve` process and the operator's `enroll` and `prune`) reads the staging table,
///   inserts verified records and rejections, registers keys, deletes records (erasure, retention). Even it cannot
///   UPDATE or DELETE the rejection log.
///
/// The document is `text`, not `jsonb`: `jsonb` re-orders keys and re-formats numbers, and a record verifies only as
/// its exact canonical bytes.
public enum ReceiverSchema {
    /// The role devices log in as.
    public static let deviceRole = "sanad_device"
    /// The role the receiver service logs in as.
    public static let receiverRole = "sanad_receiver"
    /// The notification channel `credit_submit` signals (the service also polls).
    public static let channel = "credit_submissions"
    /// The largest document `credit_submit` stages, in bytes (a record is a few KiB).
    public static let maximumDocumentBytes = 1 << 20

    /// The statements, in order (each one runs on its own: `DO` and function bodies hold semicolons).
    public static let statements: [String] = [
        """
        DO $$ BEGIN
          IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(receiverRole)') THEN CREATE ROLE \(receiverRole) LOGIN; END IF;
          IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(deviceRole)') THEN CREATE ROLE \(deviceRole) LOGIN; END IF;
        END $$
        """,
        """
        CREATE TABLE IF NOT EXISTS credit_device_keys (
            key_id text PRIMARY KEY, public_key text NOT NULL UNIQUE, registered_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS credit_records (
            id bigserial PRIMARY KEY, record_id text NOT NULL UNIQUE,
            key_id text NOT NULL REFERENCES credit_device_keys(key_id), digest text NOT NULL,
            trustworthiness integer NOT NULL, record text NOT NULL, received_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS credit_rejections (
            id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), reason text NOT NULL, key_id text,
            digest text)
        """,
        """
        CREATE TABLE IF NOT EXISTS credit_submissions (
            id bigserial PRIMARY KEY, ticket uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(), document text NOT NULL,
            submitted_at timestamptz NOT NULL DEFAULT now(),
            state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'stored', 'rejected', 'erased')),
            result_id bigint, digest text, reason text, decided_at timestamptz)
        """,
        "CREATE INDEX IF NOT EXISTS credit_submissions_pending ON credit_submissions (id) WHERE state = 'pending'",
        """
        CREATE OR REPLACE FUNCTION credit_submit(submitted text) RETURNS uuid
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
        DECLARE t uuid;
        BEGIN
          IF submitted IS NULL OR octet_length(submitted) > \(maximumDocumentBytes) THEN
            RAISE EXCEPTION 'a submission is a signed document of at most \(maximumDocumentBytes) bytes';
          END IF;
          INSERT INTO public.credit_submissions (document) VALUES (submitted) RETURNING ticket INTO t;
          PERFORM pg_notify('\(channel)', '');
          RETURN t;
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION credit_submission(submission_ticket uuid)
        RETURNS TABLE (state text, result_id bigint, digest text, reason text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
          SELECT s.state, s.result_id, s.digest, s.reason FROM public.credit_submissions s WHERE s.ticket = $1
        $$
        """,
        "REVOKE ALL ON credit_device_keys, credit_records, credit_rejections, credit_submissions FROM PUBLIC",
        "REVOKE ALL ON FUNCTION credit_submit(text), credit_submission(uuid) FROM PUBLIC",
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        "GRANT USAGE ON SCHEMA public TO \(deviceRole), \(receiverRole)",
        "GRANT EXECUTE ON FUNCTION credit_submit(text), credit_submission(uuid) TO \(deviceRole)",
        "GRANT SELECT, INSERT, DELETE ON credit_device_keys, credit_records TO \(receiverRole)",
        "GRANT SELECT, INSERT ON credit_rejections TO \(receiverRole)",
        "GRANT SELECT, UPDATE, DELETE ON credit_submissions TO \(receiverRole)",
        "GRANT USAGE ON SEQUENCE credit_records_id_seq, credit_rejections_id_seq TO \(receiverRole)",
    ]

    /// Runs every statement on `db` (the owner's connection); returns how many ran.
    @discardableResult
    public static func install(on db: PostgresConnection) throws -> Int {
        try db.query("SET client_min_messages TO warning")
        for statement in statements { try db.query(statement) }
        return statements.count
    }
}
