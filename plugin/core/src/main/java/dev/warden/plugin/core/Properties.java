package dev.warden.plugin.core;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;

/**
 * Turns a custom event's properties into JSON at the call, checking the contract's limits (§1):
 * at most 64 KiB serialized, at most 64 levels deep (the object itself is level 1), finite
 * numbers, no NUL and no unpaired surrogate in keys or strings.
 */
public final class Properties {
    public static final int MAX_BYTES = 64 * 1024;
    public static final int MAX_DEPTH = 64;

    private Properties() {}

    /** A deep copy of {@code properties} as JSON, or null for null/empty-equivalent null. */
    public static JsonObject toJson(Map<String, ?> properties) {
        if (properties == null) {
            return null;
        }
        JsonObject object = object(properties, 1, "properties");
        int bytes = object.toString().getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BYTES) {
            throw new IllegalArgumentException("too_large: properties are " + bytes
                    + " bytes serialized, over the limit of " + MAX_BYTES);
        }
        return object;
    }

    private static JsonObject object(Map<?, ?> map, int depth, String path) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("too_deep: " + path + " is nested deeper than "
                    + MAX_DEPTH + " levels");
        }
        JsonObject object = new JsonObject();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException("wrong_type: " + path + " has a key that is not a string");
            }
            checkText(key, path + " key");
            object.add(key, value(entry.getValue(), depth, path + "." + key));
        }
        return object;
    }

    private static JsonElement value(Object value, int depth, String path) {
        if (value == null) {
            return JsonNull.INSTANCE;
        }
        if (value instanceof String s) {
            checkText(s, path);
            return new JsonPrimitive(s);
        }
        if (value instanceof Boolean b) {
            return new JsonPrimitive(b);
        }
        if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (!Double.isFinite(d)) {
                throw new IllegalArgumentException("out_of_range: " + path + " is not a finite number");
            }
            return new JsonPrimitive((Number) value);
        }
        if (value instanceof Integer || value instanceof Long || value instanceof Short
                || value instanceof Byte || value instanceof BigInteger || value instanceof BigDecimal) {
            return new JsonPrimitive((Number) value);
        }
        if (value instanceof Character c) {
            return value(String.valueOf(c), depth, path);
        }
        if (value instanceof java.util.UUID || value instanceof Enum<?>) {
            return value(value instanceof Enum<?> e ? e.name() : value.toString(), depth, path);
        }
        if (value instanceof Map<?, ?> map) {
            return object(map, depth + 1, path);
        }
        if (value instanceof Collection<?> collection) {
            return array(collection.toArray(), depth + 1, path);
        }
        if (value.getClass().isArray()) {
            int n = Array.getLength(value);
            Object[] items = new Object[n];
            for (int i = 0; i < n; i++) {
                items[i] = Array.get(value, i);
            }
            return array(items, depth + 1, path);
        }
        throw new IllegalArgumentException("wrong_type: " + path + " is a "
                + value.getClass().getName() + "; use strings, numbers, booleans, null, maps and lists");
    }

    private static JsonArray array(Object[] items, int depth, String path) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("too_deep: " + path + " is nested deeper than "
                    + MAX_DEPTH + " levels");
        }
        JsonArray array = new JsonArray(items.length);
        for (int i = 0; i < items.length; i++) {
            array.add(value(items[i], depth, path + "[" + i + "]"));
        }
        return array;
    }

    private static void checkText(String s, String path) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\u0000') {
                throw new IllegalArgumentException("invalid_characters: " + path + " holds NUL (U+0000)");
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("invalid_characters: " + path + " holds an unpaired surrogate");
            }
            if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("invalid_characters: " + path + " holds an unpaired surrogate");
            }
        }
    }
}
