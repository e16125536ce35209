package dev.warden.plugin.core;

import com.google.gson.JsonObject;
import java.util.UUID;

/** One record of the contract (§5), with its client id: a UUID v7 made when the thing happened. */
public interface WardenRecord {
    RecordKind kind();

    UUID id();

    /** The record as the endpoint takes it, {@code id} included. Called on the delivery thread. */
    JsonObject toJson();
}
