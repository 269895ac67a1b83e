import Foundation
import SanadChat
import SanadCore

/// What the Absher plugins share: the options every one of them reads (`userData`, `windowDays`, `timeZone`), the
/// sample user, and the ids they refer to each other by.
public struct AbsherSettings: Sendable {
    /// The options each Absher plugin accepts.
    public static let optionKeys = ["userData", "windowDays", "timeZone"]
    /// Reminders and alerts look this many days ahead unless `windowDays` says otherwise.
    public static let defaultWindowDays = 90
    /// Asia/Riyadh (UTC+3 all year): the zone in which "today" is taken from the clock.
    public static let defaultTimeZone =
        TimeZone(identifier: "Asia/Riyadh") ?? TimeZone(secondsFromGMT: 3 * 3600) ?? .current
    /// The id of the proactive-alerts plugin (the dependents plugin follows its replies).
    public static let proactiveAlertsPluginID = "proactive-alerts"

    /// The chat's first message in the Absher app.
    public static let greeting = "مرحباً، أنا سند، مساعدك في أبشر. كيف أقدر أخدمك اليوم؟"
    /// The system prompt for typed text in the Absher app.
    public static let systemPrompt =
        "You are Sanad, the assistant of the Absher government e-services app. Answer in Arabic, briefly and politely."

    /// The Absher assistant as a product: its wording in Arabic (its own language) and English, its app's deep
    /// links, and its web chat page (`Resources/webchat.html`: plain HTML, CSS and JavaScript, right to left in
    /// Arabic, left to right in English).
    public static let product = ChatProduct(
        id: "absher", wording: wording, linkFormat: linkFormat,
        webPage: shippedResource("webchat.html").flatMap { try? String(contentsOf: $0, encoding: .utf8) },
        loginPage: shippedResource("login.html").flatMap { try? String(contentsOf: $0, encoding: .utf8) },
        terminal: terminalWording, language: .arabic,
        translations: [.english: (wording: englishWording, terminal: englishTerminalWording)])

    /// The labels of the Absher chat in a terminal, in English: the plain English ones, counting with the noun's
    /// number.
    public static let englishTerminalWording: TerminalWording = {
        var t = TerminalWording.english
        t.saved = { "(chat saved to \($0), \(englishCount($1, .message)))" }
        t.loaded = { "(chat restored from \($0), \(englishCount($1, .message)); /history shows them)" }
        t.toolsOn = {
            "(tools on: the model picks one of \(englishCount($0, .tool)), Sanad runs it and answers from its result)"
        }
        return t
    }()

    /// The chat's own texts in the Absher app in English (the same messages as `wording`).
    public static let englishWording = ChatWording(
        greeting: "Hello, I am Sanad, your Absher assistant. How can I help you today?",
        systemPrompt:
            "You are Sanad, the assistant of the Absher government e-services app. Answer in English, briefly and politely.",
        suggestionsFailed: { "Could not get the suggestions of one of the plugins.\n\($0): \($1)" },
        engineFailed: { "The engine could not be started, so replies are off; try again.\n\($0)" },
        replyPreparationFailed: { "Could not prepare the reply.\n\($0)" },
        engineNotReady: "The engine is not ready.",
        replyFailed: { "Could not finish the reply.\n\($0)" },
        followUpsFailed: { "Could not add the messages of one of the plugins.\n\($0): \($1)" },
        linkFailed: { "Could not open the link.\n\($0)" },
        verifiedNote: { "✓ Text from the model, which Sanad checked states: \($0.joined(separator: ", "))." },
        rejectedNote: {
            "⚠ The model's text failed the check (\($0.joined(separator: ", "))), so this is the template."
        },
        templateNote: "⚠ The model's text failed the check, so this is the template.",
        templateChosenNote:
            "✓ The template's sentence, from your data (this device words such replies with templates).",
        emptyText: "the text is empty",
        missingFact: { "it does not state \($0)" },
        foreignNumbers: { "it states numbers that are not in the data: \($0.joined(separator: ", "))" },
        notArabic: { "it is not in Arabic (\($0)% of the letters are)" },
        notEnglish: { "it is not in English (\($0)% of the letters are Arabic)" },
        unsupportedWords: { "it says things the data does not: \($0.joined(separator: ", "))" },
        uncoveredQuestion: englishUncoveredAnswer,
        replyTimedOut: { "⚠ The reply took longer than \(englishCount($0, .second)), so Sanad stopped it." },
        engineUnloaded: {
            "⚠ The device is short of memory, so the model was unloaded; it loads again with your next message.\n\($0)"
        })

    /// The English answer to a typed message no plugin covers, listing `capabilities`.
    @Sendable public static func englishUncoveredAnswer(_ capabilities: [String]) -> String {
        let intro =
            "I have no confirmed information from your data or the services guide to answer this, and I do not want to give you wrong information."
        guard !capabilities.isEmpty else { return intro }
        return intro + "\nI can help you with:\n" + capabilities.map { "• \($0)" }.joined(separator: "\n")
    }

    /// The labels of the Absher chat in a terminal (`sanad chat`), in Arabic.
    public static let terminalWording = TerminalWording(
        user: "أنت", assistant: "سند", writing: "سند (يكتب)", draft: "سند (مسودة النموذج)", suggestions: "اقتراحات:",
        link: { "رابط \($0)" }, loading: "(جارٍ تحميل النموذج…)", ready: "(النموذج جاهز)", stopped: "(أُوقف الرد)",
        backToChat: "(عدت إلى المحادثة)", pageShown: "(أُغلقت المحادثة وعُرضت الصفحة؛ /back للعودة)",
        noSuggestions: "! لا توجد اقتراحات الآن؛ اكتب سؤالك بالكلمات",
        noSuchSuggestion: {
            "! لا يوجد اقتراح بالرقم \(arabicIndicDigits($0))؛ اختر من ١ إلى \(arabicIndicDigits($1))"
        },
        saved: { "(حُفظت المحادثة في \($0)، عدد الرسائل: \($1))" },
        loaded: { "(استُعيدت المحادثة من \($0)، عدد الرسائل: \($1)؛ /history يعرضها)" },
        toolsOn: { "(الأدوات مفعّلة: يختار النموذج أداة من \($0) ويشغّلها سند ثم يجيب من نتيجتها)" },
        toolsOff: "(الأدوات معطّلة)")

    /// The Absher app's deep link URLs: `absher://service/<serviceType>?alert=<alertId>[&title=<title>]`.
    public static let linkFormat = DeepLinkFormat(scheme: "absher", host: "service")

    /// The chat's own texts in the Absher app (Arabic), for `ChatConfiguration(wording:)`. One language per line: a
    /// technical detail (an error from a library, a plugin id, a measurement) goes on its own line after the Arabic
    /// sentence.
    public static let wording = ChatWording(
        greeting: greeting, systemPrompt: systemPrompt,
        suggestionsFailed: { "تعذّر جلب الاقتراحات من إحدى الإضافات.\n\($0): \($1)" },
        engineFailed: { "تعذّر تشغيل المحرك فتوقفت الكتابة؛ أعد المحاولة.\n\($0)" },
        replyPreparationFailed: { "تعذّر تجهيز الرد.\n\($0)" },
        engineNotReady: "المحرك غير جاهز.",
        replyFailed: { "تعذّر إكمال الرد.\n\($0)" },
        followUpsFailed: { "تعذّر إضافة رسائل إحدى الإضافات.\n\($0): \($1)" },
        linkFailed: { "تعذّر فتح الرابط.\n\($0)" },
        verifiedNote: { "✓ نص من النموذج، وتحقق سند من أنه يذكر: \($0.joined(separator: "، "))." },
        rejectedNote: { "⚠ نص النموذج لم يجتز التحقق (\($0.joined(separator: "، "))) فهذه جملة القالب." },
        templateNote: "⚠ نص النموذج لم يجتز التحقق فهذه جملة القالب.",
        templateChosenNote: "✓ جملة القالب من بياناتك (هذا الجهاز يصوغ هذه الردود بالقوالب).",
        emptyText: "النص فارغ",
        missingFact: { "لم يذكر \($0)" },
        foreignNumbers: { "ذكر أرقاماً ليست في البيانات: \($0.joined(separator: "، "))" },
        notArabic: { "ليس بالعربية (\($0)٪ من الحروف عربية)" },
        notEnglish: { "ليس بالإنجليزية (\($0)٪ من الحروف عربية)" },
        unsupportedWords: { "قال ما ليس في البيانات: \($0.joined(separator: "، "))" },
        commonWords: arabicCommonWords,
        uncoveredQuestion: uncoveredAnswer,
        replyTimedOut: { "⚠ تأخر الرد أكثر من \(arabicCount($0, .second, genitive: true)) فأوقفه سند." },
        engineUnloaded: {
            "⚠ ذاكرة الجهاز منخفضة فأُخرج النموذج منها؛ سيُحمَّل من جديد مع رسالتك التالية.\n\($0)"
        })

    /// Arabic function words and courtesies a rewording may add (a generated text's other words must come from the
    /// prompt or the template): they carry no fact of their own.
    public static let arabicCommonWords = """
        في من إلى الى على عن عبر مع و أو او ثم لكن إن ان أن هذا هذه ذلك تلك هو هي هم أنت انت لك لكم عليك عندك بك منك \
        يا يرجى الرجاء فضلك لطفاً شكراً شكرا عزيزي عزيزتي أبشر سند قد لقد كل أي حتى بعد قبل عند الآن هنا الذي التي \
        ما لا لم لن نعم تستطيع يمكنك يمكن تقدر
        """.split(separator: " ").map(String.init)

    /// The answer to a typed message no plugin covers: an honest "I can help with…", listing `capabilities`.
    @Sendable public static func uncoveredAnswer(_ capabilities: [String]) -> String {
        let intro =
            "ليس عندي معلومة مؤكدة من بياناتك أو من دليل الخدمات أجيب بها على هذا، ولا أريد أن أعطيك معلومة غير صحيحة."
        guard !capabilities.isEmpty else { return intro }
        return intro + "\nأقدر أساعدك في:\n" + capabilities.map { "• \($0)" }.joined(separator: "\n")
    }

    /// The look-ahead window of these settings, on `now`.
    public func window(now: @escaping @Sendable () -> Date) -> AbsherWindow {
        AbsherWindow(days: windowDays, timeZone: timeZone, now: now)
    }

    /// The user's data file, read and validated.
    public var userData: UserData
    public var windowDays: Int
    public var timeZone: TimeZone

    public init(
        userData: UserData, windowDays: Int = AbsherSettings.defaultWindowDays,
        timeZone: TimeZone = AbsherSettings.defaultTimeZone
    ) {
        self.userData = userData
        self.windowDays = windowDays
        self.timeZone = timeZone
    }

    /// Reads plugin `plugin`'s options from `context` strictly and loads the user data file they name; errors name
    /// the config file, the plugin, the option or the data file's key path.
    public init(plugin: String, context: PluginContext) throws {
        try self.init(options: try PluginOptions(plugin: plugin, context: context, allowed: Self.optionKeys))
    }

    /// Reads the common options from `options` (a plugin with options of its own allows them in `options`).
    public init(options: PluginOptions) throws {
        let plugin = options.plugin
        let file = try options.requiredFile(
            "userData",
            hint: "name the user's JSON file (for example \"../Plugins/AbsherData/Resources/sample-user.json\")")
        self.init(
            userData: try UserData.load(from: file, plugin: plugin),
            windowDays: try options.int("windowDays", range: 0...3650) ?? Self.defaultWindowDays,
            timeZone: try options.timeZone("timeZone") ?? Self.defaultTimeZone)
    }

    /// The sample user shipped in this target's resources (a driving licence expiring 45 days after 2026-11-22, a
    /// passport after 75, a national ID after 480; dependents). Nil when it cannot be found.
    public static var sampleUserDataURL: URL? { shippedResource("sample-user.json") }

    /// The services knowledge base shipped in this target's resources (`services.json`).
    public static var servicesURL: URL? { shippedResource("services.json") }

    /// A file of this target's resources, found without `Bundle.module` (which stops the process when the bundle is
    /// missing): next to the executable, else in the source tree. Nil when neither exists.
    public static func shippedResource(_ name: String) -> URL? {
        var candidates: [URL] = []
        let bundleName = "Sanad_AbsherData.resources"
        candidates.append(Bundle.main.bundleURL.appendingPathComponent(bundleName))
        if let r = Bundle.main.resourceURL { candidates.append(r.appendingPathComponent(bundleName)) }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundleName))
        for dir in candidates {
            for path in ["Resources/\(name)", name] {
                let url = dir.appendingPathComponent(path)
                if FileManager.default.fileExists(atPath: url.path) { return url }
            }
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Resources/\(name)")
        return FileManager.default.fileExists(atPath: source.path) ? source : nil
    }
}

/// How far ahead the Absher plugins look: alerts and reminders are due within `days` days of today, where today is
/// taken from the clock `now` in `timeZone`.
public struct AbsherWindow: Sendable {
    public var days: Int
    public var timeZone: TimeZone
    public let now: @Sendable () -> Date

    public init(
        days: Int = AbsherSettings.defaultWindowDays, timeZone: TimeZone = AbsherSettings.defaultTimeZone,
        now: @escaping @Sendable () -> Date
    ) {
        self.days = days
        self.timeZone = timeZone
        self.now = now
    }

    /// Today in `timeZone`, from the clock.
    public var today: CivilDate { CivilDate.today(now(), in: timeZone) }
}
