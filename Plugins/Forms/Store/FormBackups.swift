import Foundation
import SanadCore

/// The backups kept beside a store, in its `backups/` folder: automatic ones (after each completed form, and at most
/// daily while answering; rotated, the newest `keep` kept) and the store as it was before each restore (kept until
/// the person deletes them). Each is a `FormsArchive` written atomically, so `sanad form restore` reads any of them.
public struct FormBackups: Sendable {
    public static let folderName = "backups"

    public enum Kind: String, Sendable, CaseIterable {
        case auto
        case beforeRestore = "before-restore"
    }

    /// One backup file.
    public struct Entry: Sendable {
        public var url: URL
        public var kind: Kind
        /// When it was made (from its name, to the second).
        public var made: Date
        public var bytes: Int
    }

    public let directory: URL

    /// The backups of the store in `storeDirectory`.
    public init(storeDirectory: URL) {
        directory = storeDirectory.appendingPathComponent(Self.folderName)
    }

    /// Every backup, oldest first; files of other names are left alone.
    public func list() -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { name -> Entry? in
            guard name.hasSuffix(".zip"),
                let kind = Kind.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count }).first(where: {
                    name.hasPrefix($0.rawValue + "-")
                }),
                let made = Self.stampFormatter.date(from: String(name.dropFirst(kind.rawValue.count + 1).prefix(16)))
            else { return nil }
            let url = directory.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
            return Entry(url: url, kind: kind, made: made, bytes: size ?? 0)
        }.sorted { ($0.made, $0.url.lastPathComponent) < ($1.made, $1.url.lastPathComponent) }
    }

    /// Writes `archive` as a new backup of `kind` made `now` (`auto-20261127T150102Z.zip`), atomically (a temporary
    /// file renamed into place); returns its file.
    public func write(_ archive: [UInt8], kind: Kind, now: Date) throws -> URL {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw FormError.store(
                "\(directory.path): the backups folder cannot be made (\(error.localizedDescription))")
        }
        let stem = "\(kind.rawValue)-\(Self.stampFormatter.string(from: now))"
        var url = directory.appendingPathComponent(stem + ".zip")
        var n = 2
        while FileManager.default.fileExists(atPath: url.path) {
            url = directory.appendingPathComponent("\(stem)-\(n).zip")
            n += 1
        }
        do { try Data(archive).write(to: url, options: .atomic) } catch {
            throw FormError.store("\(url.path): the backup cannot be written (\(error.localizedDescription))")
        }
        return url
    }

    /// Deletes the oldest automatic backups beyond the newest `keep`; returns what was deleted.
    @discardableResult
    public func rotate(keep: Int) throws -> [URL] {
        let automatic = list().filter { $0.kind == .auto }
        let old = automatic.dropLast(max(keep, 0)).map(\.url)
        for url in old {
            do { try FileManager.default.removeItem(at: url) } catch {
                throw FormError.store("\(url.path): an old backup cannot be removed (\(error.localizedDescription))")
            }
        }
        return old
    }

    static let stampFormatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return f
    }()
}

/// When automatic backups are made: `enabled` (`--no-auto-backup` turns it off) and how many are kept.
public struct AutoBackupPolicy: Sendable {
    public var enabled: Bool
    public var keep: Int
    /// A backup while answering is made when the newest automatic one is older than this.
    public var interval: TimeInterval

    public static let standard = AutoBackupPolicy(enabled: true, keep: 7, interval: 86_400)

    public init(enabled: Bool, keep: Int, interval: TimeInterval = 86_400) {
        self.enabled = enabled
        self.keep = keep
        self.interval = interval
    }
}

/// A store that backs itself up: after an answer is saved, when that answer completes its form, or when the newest
/// automatic backup is older than the policy's interval, every session goes into a new automatic backup and the old
/// ones are rotated. A backup that fails never fails the answer (it is already saved): `report` says why.
public final class AutoBackupStore: FormStore {
    let inner: any FormStore
    let backups: FormBackups
    let catalog: FormCatalog
    let policy: AutoBackupPolicy
    /// The store folder: its `backup.key` is read (or made) when a backup is written, not before.
    let storeDirectory: URL
    let now: @Sendable () -> Date
    let report: (String) -> Void

    public init(
        _ inner: any FormStore, storeDirectory: URL, catalog: FormCatalog, policy: AutoBackupPolicy,
        now: @escaping @Sendable () -> Date, report: @escaping (String) -> Void
    ) {
        self.inner = inner
        backups = FormBackups(storeDirectory: storeDirectory)
        self.storeDirectory = storeDirectory
        self.catalog = catalog
        self.policy = policy
        self.now = now
        self.report = report
    }

    public var location: String { inner.location }
    public func sessions() throws -> [SessionRecord] { try inner.sessions() }
    public func session(_ id: String) throws -> SessionRecord? { try inner.session(id) }
    public func create(_ session: SessionRecord) throws { try inner.create(session) }
    public func remove(field: String, session id: String) throws { try inner.remove(field: field, session: id) }
    public func replace(_ session: SessionRecord) throws { try inner.replace(session) }
    public func delete(session id: String) throws { try inner.delete(session: id) }

    public func save(_ answer: StoredAnswer, session id: String) throws {
        try inner.save(answer, session: id)
        guard policy.enabled else { return }
        do {
            if let reason = try due(session: id) { try backUp(reason: reason) }
        } catch { report("automatic backup not made: \(error) (the answer is saved)") }
    }

    /// Why a backup is due after an answer to session `id`, or nil.
    func due(session id: String) throws -> String? {
        let t = now()
        if let record = try inner.session(id), let template = try? catalog.template(record.templateID),
            FormSession(template: template, record: record, store: inner, today: CivilDate.today(t), now: now)
                .isComplete
        {
            return "form \(id) is complete"
        }
        guard let newest = backups.list().last(where: { $0.kind == .auto }) else { return "the first answer" }
        return t.timeIntervalSince(newest.made) >= policy.interval ? "the newest is over a day old" : nil
    }

    func backUp(reason: String) throws {
        let t = now()
        let records = try inner.sessions()
        let archive = try FormsArchive.make(
            records, catalog: catalog, store: inner, today: CivilDate.today(t), now: t,
            key: try BackupKey.loadOrCreate(directory: storeDirectory))
        let url = try backups.write(archive, kind: .auto, now: t)
        let removed = try backups.rotate(keep: policy.keep)
        report(
            "backed up \(records.count) session(s) to \(url.path) (automatic: \(reason); keeping the newest "
                + "\(policy.keep)\(removed.isEmpty ? "" : ", \(removed.count) older removed"))")
    }
}
