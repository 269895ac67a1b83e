import FormsPlugin
import Foundation
import SanadCommandLine
import SanadCore

/// `sanad form privacy`: what the forms plugin keeps on this device, everything exported, or everything wiped.
extension FormCommand {
    static func privacy(
        store: any FormStore, directory: URL, catalog: FormCatalog, today: CivilDate, now: Date, json: Bool,
        export: String?, wipe: Bool, yes: Bool, key: () throws -> BackupKey
    ) throws -> Int32 {
        let records = try store.sessions()
        let answers = records.flatMap(\.answers).filter { !$0.value.isEmpty }
        let skipped = records.flatMap(\.answers).count - answers.count
        let bySource = AnswerSource.allCases.map { source in (source, answers.filter { $0.source == source }.count) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let files = names.sorted().map { name -> (name: String, bytes: Int) in
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(name).path)
            return (name, (attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
        let sent =
            "nothing: the forms plugin makes no network connection; exports and backups go only where you name them"
        if json {
            print(
                JSONValue.object([
                    "store": .string(store.location), "directory": .string(directory.path),
                    "sessions": .array(
                        records.map {
                            .object([
                                "id": .string($0.id), "templateId": .string($0.templateID),
                                "language": .string($0.language), "createdAt": .string($0.createdAt),
                                "answers": .number(Double($0.answers.filter { !$0.value.isEmpty }.count)),
                            ])
                        }),
                    "skippedOptionalFields": .number(Double(skipped)),
                    "answersBySource": .object(
                        Dictionary(
                            uniqueKeysWithValues: bySource.map { ($0.0.rawValue, JSONValue.number(Double($0.1))) })),
                    "files": .array(
                        files.map { .object(["name": .string($0.name), "bytes": .number(Double($0.bytes))]) }),
                    "sent": .string(sent),
                ]).prettyString)
        } else {
            print("The forms plugin keeps, on this device only:")
            print("  store: \(store.location)")
            print(
                "  sessions: \(records.count)"
                    + (records.isEmpty
                        ? ""
                        : " (" + records.map { "\($0.id): \($0.templateID), \($0.language)" }.joined(separator: "; ")
                            + ")"))
            print(
                "  answers: \(answers.count) (" + bySource.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")
                    + ")" + (skipped > 0 ? "; \(skipped) optional field(s) skipped" : ""))
            print("  files in \(directory.path):")
            for f in files { print("    \(f.name)  \(f.bytes) bytes") }
            if files.isEmpty { print("    (none)") }
            print("  sent anywhere: \(sent)")
        }
        if let export {
            let archive = try FormsArchive.make(
                records, catalog: catalog, store: store, today: today, now: now, key: try key())
            try writeExport(Data(archive), to: URL(fileURLWithPath: export))
            print("exported \(records.count) session(s) to \(export)")
        }
        guard wipe else { return ExitCode.success }
        if !yes {
            printError(
                "This deletes \(records.count) session(s), \(answers.count) answers, the store files and the backups "
                    + "in \(directory.path)."
            )
            FileHandle.standardError.write(Data("Type WIPE to confirm: ".utf8))
            guard readLine()?.trimmingCharacters(in: .whitespacesAndNewlines) == "WIPE" else {
                printError("not wiped: nothing changed")
                return ExitCode.failure
            }
        }
        for r in records { try store.delete(session: r.id) }
        // The database files go too, so nothing deleted lingers in free pages.
        for name in [
            FormStores.sqliteFile, FormStores.sqliteFile + "-wal", FormStores.sqliteFile + "-shm", FormStores.jsonFile,
            FormBackups.folderName,
        ] {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: url.path) {
                do { try FileManager.default.removeItem(at: url) } catch {
                    throw FormError.store(
                        "\(url.path): cannot be removed (\(error.localizedDescription)); the sessions are deleted")
                }
            }
        }
        print("wiped: \(records.count) session(s), the store files and the backups in \(directory.path)")
        print(
            "kept: \(BackupKey.fileName) (no personal data; archives you exported restore here with it; delete it to "
                + "disown them)")
        return ExitCode.success
    }
}
