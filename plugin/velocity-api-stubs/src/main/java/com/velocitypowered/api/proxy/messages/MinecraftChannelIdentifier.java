package com.velocitypowered.api.proxy.messages;

import java.util.Objects;

/** The real class checks the name against [a-z0-9/\-_]*; the plugin's one channel passes. */
public final class MinecraftChannelIdentifier implements ChannelIdentifier {
    private final String namespace;
    private final String name;

    private MinecraftChannelIdentifier(String namespace, String name) {
        this.namespace = namespace;
        this.name = name;
    }

    public static MinecraftChannelIdentifier create(String namespace, String name) {
        return new MinecraftChannelIdentifier(Objects.requireNonNull(namespace), Objects.requireNonNull(name));
    }

    public String getNamespace() {
        return namespace;
    }

    public String getName() {
        return name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MinecraftChannelIdentifier that && namespace.equals(that.namespace) && name.equals(that.name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(namespace, name);
    }

    @Override
    public String getId() {
        return namespace + ":" + name;
    }
}
