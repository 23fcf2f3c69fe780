package idpbench.spring;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.UUID;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.OAuth2AuthorizationServerConfiguration;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.oauth2.core.AuthorizationGrantType;
import org.springframework.security.oauth2.core.ClientAuthenticationMethod;
import org.springframework.security.oauth2.core.oidc.OidcScopes;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.server.authorization.JdbcOAuth2AuthorizationConsentService;
import org.springframework.security.oauth2.server.authorization.JdbcOAuth2AuthorizationService;
import org.springframework.security.oauth2.server.authorization.client.JdbcRegisteredClientRepository;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClient;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClientRepository;
import org.springframework.security.oauth2.server.authorization.settings.AuthorizationServerSettings;
import org.springframework.security.oauth2.server.authorization.settings.ClientSettings;
import org.springframework.security.oauth2.server.authorization.settings.TokenSettings;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.LoginUrlAuthenticationEntryPoint;
import org.springframework.security.web.util.matcher.MediaTypeRequestMatcher;

/**
 * The authorization server as demo-authorizationserver's
 * AuthorizationServerConfig configures it (the endpoints' filter chain with
 * OpenID Connect, the JDBC stores, a JWK source of one RSA key generated at
 * start, default settings), less the sample's device flow, token exchange,
 * mTLS and federation clients, and with one client: the benchmark's. The
 * client repository is the sample's JDBC one behind a cache of its lookups
 * by id (CachingRegisteredClientRepository says why).
 */
@Configuration(proxyBeanMethods = false)
public class AuthorizationServerConfig {

	@Bean
	@Order(Ordered.HIGHEST_PRECEDENCE)
	public SecurityFilterChain authorizationServerSecurityFilterChain(HttpSecurity http) throws Exception {
		http
			.oauth2AuthorizationServer((authorizationServer) -> {
				http.securityMatcher(authorizationServer.getEndpointsMatcher());
				authorizationServer.oidc(Customizer.withDefaults()); // OpenID Connect 1.0
			})
			.authorizeHttpRequests((authorize) -> authorize.anyRequest().authenticated())
			// An unauthenticated browser at the authorization endpoint goes to the login page.
			.exceptionHandling((exceptions) -> exceptions.defaultAuthenticationEntryPointFor(
					new LoginUrlAuthenticationEntryPoint("/login"), new MediaTypeRequestMatcher(MediaType.TEXT_HTML)));
		return http.build();
	}

	/**
	 * The benchmark's client, saved in the database as the sample saves its
	 * own: client_secret_basic; authorization_code, refresh_token and
	 * client_credentials; no consent page; no PKCE required. Its secret comes from a file and
	 * is stored encoded by the framework's default encoder ({bcrypt}): the sample's
	 * {noop} would be re-encoded so at the first client authentication anyway
	 * (ClientSecretAuthenticationProvider upgrades an encoding that is not the
	 * default one and saves the client). A
	 * restart (cold start B) updates the row of the same client_id.
	 */
	@Bean
	public RegisteredClientRepository registeredClientRepository(JdbcTemplate jdbcTemplate,
			@Value("${idpbench.client-id}") String clientId,
			@Value("${idpbench.client-secret-file}") Path secretFile,
			@Value("${idpbench.redirect-uri}") String redirectUri,
			@Value("${idpbench.access-token-ttl}") Duration accessTokenTtl) throws IOException {
		JdbcRegisteredClientRepository repository = new JdbcRegisteredClientRepository(jdbcTemplate);
		RegisteredClient existing = repository.findByClientId(clientId);
		String id = (existing != null) ? existing.getId() : UUID.randomUUID().toString();
		String stored = PasswordEncoderFactories.createDelegatingPasswordEncoder().encode(Secrets.read(secretFile));
		RegisteredClient client = RegisteredClient.withId(id)
			.clientId(clientId)
			.clientSecret(stored)
			.clientAuthenticationMethod(ClientAuthenticationMethod.CLIENT_SECRET_BASIC)
			.authorizationGrantType(AuthorizationGrantType.AUTHORIZATION_CODE)
			.authorizationGrantType(AuthorizationGrantType.REFRESH_TOKEN)
			.authorizationGrantType(AuthorizationGrantType.CLIENT_CREDENTIALS)
			.redirectUri(redirectUri)
			.scope(OidcScopes.OPENID)
			.scope(OidcScopes.PROFILE)
			.clientSettings(ClientSettings.builder()
				.requireAuthorizationConsent(false)
				// The benchmark's login drivers send no PKCE (ClientSettings' default since 7.0: required).
				.requireProofKey(false)
				.build())
			.tokenSettings(TokenSettings.builder().accessTokenTimeToLive(accessTokenTtl).build())
			.build();
		repository.save(client);
		return new CachingRegisteredClientRepository(repository);
	}

	@Bean
	public JdbcOAuth2AuthorizationService authorizationService(JdbcTemplate jdbcTemplate,
			RegisteredClientRepository registeredClientRepository) {
		return new JdbcOAuth2AuthorizationService(jdbcTemplate, registeredClientRepository);
	}

	@Bean
	public JdbcOAuth2AuthorizationConsentService authorizationConsentService(JdbcTemplate jdbcTemplate,
			RegisteredClientRepository registeredClientRepository) {
		return new JdbcOAuth2AuthorizationConsentService(jdbcTemplate, registeredClientRepository);
	}

	/** One RSA 2048 key generated at start, as the sample's Jwks.generateRsa. */
	@Bean
	public JWKSource<SecurityContext> jwkSource() throws NoSuchAlgorithmException {
		KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
		generator.initialize(2048);
		KeyPair keyPair = generator.generateKeyPair();
		RSAKey rsaKey = new RSAKey.Builder((RSAPublicKey) keyPair.getPublic())
			.privateKey((RSAPrivateKey) keyPair.getPrivate())
			.keyID(UUID.randomUUID().toString())
			.build();
		JWKSet jwkSet = new JWKSet(rsaKey);
		return (jwkSelector, securityContext) -> jwkSelector.select(jwkSet);
	}

	@Bean
	public JwtDecoder jwtDecoder(JWKSource<SecurityContext> jwkSource) {
		return OAuth2AuthorizationServerConfiguration.jwtDecoder(jwkSource);
	}

	@Bean
	public AuthorizationServerSettings authorizationServerSettings() {
		return AuthorizationServerSettings.builder().build();
	}

	/** Secret files: one line, the value; never logged. */
	static final class Secrets {

		private Secrets() {
		}

		static String read(Path file) throws IOException {
			String s = Files.readString(file).strip();
			if (s.isEmpty()) {
				throw new IOException(file + " is empty");
			}
			return s;
		}

	}

}
