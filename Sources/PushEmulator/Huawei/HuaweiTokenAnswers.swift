extension EmulatorConfiguration.VendorTokenAnswer {
    /// The prefixes the Huawei side refuses by default, with their v3 `illegalTokens` keys (`noRight`,
    /// `tokenFormatError`, `tokenPlatformNotSupport`); v1 lists every refused token in `illegal_tokens`.
    public static let huaweiDefaults: [Self] = [
        .init(prefix: "unregistered", reason: "noRight"),
        .init(prefix: "invalid", reason: "tokenFormatError"),
        .init(prefix: "badtoken", reason: "tokenFormatError"),
        .init(prefix: "illegal", reason: "tokenFormatError"),
        .init(prefix: "platform", reason: "tokenPlatformNotSupport"),
    ]
}
