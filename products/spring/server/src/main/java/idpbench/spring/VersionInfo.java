package idpbench.spring;

import java.util.Map;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.security.config.annotation.web.configurers.oauth2.server.authorization.OAuth2AuthorizationServerConfigurer;
import org.springframework.security.core.SpringSecurityCoreVersion;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClient;
import org.springframework.stereotype.Component;

/**
 * The versions running, under "idpbench" in the actuator's /info (readback
 * reads them): each from its jar's manifest.
 */
@Component
public class VersionInfo implements InfoContributor {

	@Override
	public void contribute(Info.Builder builder) {
		builder.withDetail("idpbench", Map.of(
				"authorization_server", version(RegisteredClient.class),
				"authorization_server_config", version(OAuth2AuthorizationServerConfigurer.class),
				"spring_security", String.valueOf(SpringSecurityCoreVersion.getVersion()),
				"spring_boot", String.valueOf(SpringBootVersion.getVersion())));
	}

	private static String version(Class<?> c) {
		String v = c.getPackage().getImplementationVersion();
		return (v != null) ? v : "unknown";
	}

}
