package com.velocitypowered.api.util;

import java.util.Objects;

public final class ProxyVersion {
    private final String name;
    private final String vendor;
    private final String version;

    public ProxyVersion(String name, String vendor, String version) {
        this.name = Objects.requireNonNull(name, "name");
        this.vendor = Objects.requireNonNull(vendor, "vendor");
        this.version = Objects.requireNonNull(version, "version");
    }

    public String getName() {
        return name;
    }

    public String getVendor() {
        return vendor;
    }

    public String getVersion() {
        return version;
    }
}
