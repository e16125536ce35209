package space.arim.libertybans.api;

import space.arim.libertybans.api.formatter.PunishmentFormatter;
import space.arim.libertybans.api.scope.ScopeManager;
import space.arim.omnibus.Omnibus;

public interface LibertyBans {
    Omnibus getOmnibus();

    PunishmentFormatter getFormatter();

    ScopeManager getScopeManager();

    space.arim.libertybans.api.punish.PunishmentDrafter getDrafter();

    space.arim.libertybans.api.punish.PunishmentRevoker getRevoker();
}
